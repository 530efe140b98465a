//! Permalinks, exports and imports: a run leaves the app and comes back as the same run.

use std::process::Command;

use lockstep::builtin;
use lockstep::lesson::edit::Edit;
use lockstep::scenario::{Fencing, FencingChecks};
use lockstep::trace;
use lockstep::ui::export::{self, PNG_KEYWORD};
use lockstep::ui::share::{self, Link, Source, LINK_SCENARIO_BYTES_MAX};
use lockstep::ui::toggles::{self, Memory, Toggle};
use lockstep::ui::Outcome;
use lockstep::Scenario;

use crate::scenario;

fn digest_of(s: &Scenario) -> u64 {
    let outcome = Outcome::compute(s).expect("runs");
    trace::digest(&outcome.events)
}

fn link_for(picked: &str, s: &Scenario) -> Link {
    Link {
        version: share::LINK_VERSION,
        source: share::source_of(picked, s),
        playhead_us: 1_234,
        zoom: 4,
        own_order: true,
        compare: Some(Edit::Partition(true)),
        digest: Some(digest_of(s)),
    }
}

/// Opening a link gives the scenario it was made from, event for event.
fn reopened_digest(link: &Link) -> u64 {
    let back = Link::from_fragment(&link.to_fragment()).expect("a made link reads back");
    assert_eq!(&back, link, "the link reads back field for field");
    digest_of(
        &back
            .source
            .scenario()
            .expect("the linked scenario is valid"),
    )
}

#[test]
fn a_builtin_link_is_its_file_name_and_reproduces_the_run() {
    for b in builtin::ALL {
        let s = Scenario::from_toml_str(b.toml()).unwrap();
        let link = link_for(b.file, &s);
        assert_eq!(
            link.source,
            Source::Builtin {
                file: b.file.to_string(),
                edits: vec![]
            }
        );
        assert!(
            link.to_fragment().len() < 120,
            "{}: a built-in link is short: {}",
            b.file,
            link.to_fragment()
        );
        assert_eq!(Some(reopened_digest(&link)), link.digest, "{}", b.file);
    }
}

#[test]
fn a_toggled_builtin_travels_as_its_changes() {
    let start = scenario("05");
    let mut memory = Memory::default();
    let toggled = toggles::apply(
        &start,
        &Toggle::Fencing {
            resource: "accounts".into(),
            mode: Fencing::OneSource,
            checks: Some(FencingChecks::AllAccesses),
        },
        &mut memory,
    );
    assert_ne!(toggled, start, "the toggle changes the scenario");
    let mut reseeded = toggled.clone();
    reseeded.seed = 7;
    let link = link_for("05-fencing.toml", &reseeded);
    let Source::Builtin { edits, .. } = &link.source else {
        panic!(
            "a toggled built-in is still a built-in link: {:?}",
            link.source
        );
    };
    assert_eq!(edits.len(), 2, "one fencing change and the seed: {edits:?}");
    assert!(link.to_fragment().len() < 200, "{}", link.to_fragment());
    assert_eq!(reopened_digest(&link), digest_of(&reseeded));
}

#[test]
fn an_edited_scenario_travels_whole_and_compressed() {
    let mut s = scenario("07");
    s.duration_ms += 500;
    s.name = "My & <own> scenario #1".into();
    let link = link_for("07-three-services.toml", &s);
    assert!(matches!(link.source, Source::Json { .. }));
    let fragment = link.to_fragment();
    assert!(
        fragment.len() < s.to_json_string().len(),
        "compressed: {} < {}",
        fragment.len(),
        s.to_json_string().len()
    );
    assert!(
        fragment.bytes().all(|b| b.is_ascii_graphic()),
        "URL-safe: {fragment}"
    );
    assert_eq!(reopened_digest(&link), digest_of(&s));
}

#[test]
fn broken_links_say_why() {
    let good = link_for("05-fencing.toml", &scenario("05")).to_query();
    let cases: Vec<(String, &str)> = vec![
        (
            "v=1&b=05-fencing.toml&d=43c926a68f15ef5".into(),
            "not 16 hexadecimal digits",
        ),
        (
            "v=1&b=05-fencing.toml&t=1e20".into(),
            "not a whole number of microseconds",
        ),
        ("v=1&d=0000000000000000".into(), "names no scenario"),
        (
            "v=1&b=nope.toml&d=0000000000000000".into(),
            "no built-in scenario",
        ),
        (
            "v=1&b=05-fencing.toml&e=fly%20away&d=0000000000000000".into(),
            "the change",
        ),
        ("v=1&c=!!!&d=0000000000000000".into(), "not base64url"),
        ("v=1&c=AAAA&d=0000000000000000".into(), "not deflate"),
        (format!("{good}&x=1"), "unknown field"),
        (
            "v=1&b=05-fencing.toml&d=zz00000000000000".into(),
            "not hexadecimal",
        ),
        ("v=1&b=%ZZ&d=0000000000000000".into(), "%-escape"),
        ("x".repeat(300 * 1024), "links are read up to"),
    ];
    for (query, why) in cases {
        let err = Link::from_query(&query)
            .and_then(|l| l.source.scenario().map(|_| l))
            .expect_err(&query[..query.len().min(60)]);
        assert!(err.0.contains(why), "{query:.60}: {err} (expected {why:?})");
    }
}

#[test]
fn a_small_link_cannot_expand_into_gigabytes() {
    // A megabyte of one letter deflates to about a kilobyte; one more byte than the limit must
    // be refused before the text is ever whole.
    let bomb = "a".repeat(LINK_SCENARIO_BYTES_MAX + 1);
    let packed = share::pack(&bomb);
    assert!(packed.len() < 4096, "{} bytes", packed.len());
    let err = share::unpack(&packed).expect_err("too large once inflated");
    assert!(err.0.contains("expands past"), "{err}");
    let fits = "a".repeat(1000);
    assert_eq!(share::unpack(&share::pack(&fits)).unwrap(), fits);
}

#[test]
fn a_link_reads_and_writes_the_same_with_the_packing_given_as_with_its_own() {
    // The embed view gives its own packing (the browser's); everything else about a link must
    // be the same as with `pack` and `unpack`.
    let mut s = scenario("05");
    s.name = "Packed & given".into();
    let link = link_for("05-fencing.toml", &s);
    let query = link.to_query();
    // A packing given is the one written.
    let given = link.to_fragment_packed(&|_| "PACKED".to_string());
    assert_eq!(
        given,
        format!(
            "#/run?{}",
            query.replace(share::packed_in(&query)[0], "PACKED")
        )
    );
    let packed = share::packed_in(&query);
    assert_eq!(packed.len(), 1, "{query}");
    assert_eq!(
        Link::from_query_unpacked(&query, &share::unpack),
        Link::from_query(&query)
    );
    // What the given unpacking says is what the link says: its text, or its refusal.
    let refusing = |p: &str| {
        assert_eq!(p, packed[0]);
        Err(share::expands_too_far())
    };
    assert_eq!(
        Link::from_query_unpacked(&query, &refusing).expect_err("refused"),
        share::expands_too_far()
    );
    // The packed values are the c= and j= fields, in order; no other field is one.
    assert_eq!(
        share::packed_in("v=1&c=AB&b=x.toml&j=CD&e=j%3DEF&cj=GH"),
        vec!["AB", "CD"]
    );
    // The steps around deflating give unpack's own words.
    assert_eq!(share::unpack("AAAA").unwrap_err(), share::not_deflate());
    // A whole stream reads back; bytes after its end are refused, as the browser's
    // decompressor refuses them, and so is a stream cut short.
    let whole = share::decode_packed(&share::pack("name = \"x\"")).unwrap();
    assert_eq!(
        share::unpack(&share::encode_packed(&whole)).unwrap(),
        "name = \"x\""
    );
    let mut junk = whole.clone();
    junk.extend([1, 2, 3]);
    assert_eq!(
        share::unpack(&share::encode_packed(&junk)).unwrap_err(),
        share::not_deflate()
    );
    let cut = &whole[..whole.len() - 1];
    assert_eq!(
        share::unpack(&share::encode_packed(cut)).unwrap_err(),
        share::not_deflate()
    );
    // The bound holds exactly: a text of the bound's length reads, one byte more does not.
    let at_bound = "a".repeat(share::LINK_SCENARIO_BYTES_MAX);
    assert_eq!(
        share::unpack(&share::pack(&at_bound)).unwrap().len(),
        at_bound.len()
    );
    let past = "a".repeat(share::LINK_SCENARIO_BYTES_MAX + 1);
    assert_eq!(
        share::unpack(&share::pack(&past)).unwrap_err(),
        share::expands_too_far()
    );
    assert!(share::decode_packed("a*b")
        .unwrap_err()
        .0
        .contains("not base64url"));
    assert!(share::text_of_inflated(vec![0xff])
        .unwrap_err()
        .0
        .contains("not UTF-8"));
    assert_eq!(
        share::decode_packed(&share::encode_packed(&[1, 2, 250])).unwrap(),
        vec![1, 2, 250]
    );
}

#[test]
fn a_link_from_another_version_still_reads_and_says_its_version() {
    let mut link = link_for("05-fencing.toml", &scenario("05"));
    link.version = 99;
    let back = Link::from_fragment(&link.to_fragment()).unwrap();
    assert_eq!(back.version, 99);
    assert_ne!(back.version, share::LINK_VERSION);
}

/// A 1×1 PNG (signature, IHDR, IDAT, IEND), as a browser's canvas would give.
fn tiny_png() -> Vec<u8> {
    let chunk = |kind: &[u8; 4], data: &[u8]| {
        let mut crc = 0xFFFF_FFFFu32;
        for &b in kind.iter().chain(data) {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&(!crc).to_be_bytes());
        out
    };
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]));
    png.extend(chunk(
        b"IDAT",
        &miniz_oxide::deflate::compress_to_vec_zlib(&[0, 255, 255, 255], 6),
    ));
    png.extend(chunk(b"IEND", &[]));
    png
}

#[test]
fn exported_files_carry_their_run_and_import_to_the_same_digest() {
    let mut s = scenario("06");
    s.seed = 3;
    let outcome = Outcome::compute(&s).unwrap();
    let digest = format!("{:016x}", trace::digest(&outcome.events));

    let svg = export::timeline_svg(&s, &outcome, Some("https://example.org/#/run?v=1&d=0"));
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(
        svg.matches("<g>").count() + svg.matches("<g ").count(),
        svg.matches("</g>").count()
    );
    assert!(
        svg.contains("&amp;d=0"),
        "the link is escaped inside the SVG"
    );
    let json = export::trace_json(&s, &outcome);
    let value: serde_json::Value = serde_json::from_str(&json).expect("the trace is JSON");
    assert_eq!(value["event_count"], outcome.events.len());
    assert_eq!(
        value["events"].as_array().unwrap().len(),
        outcome.events.len()
    );
    let meta = serde_json::to_string(&export::RunMeta::of(&s, &outcome)).unwrap();
    let png = export::png_with_text(&tiny_png(), PNG_KEYWORD, &meta).unwrap();
    assert_eq!(
        export::png_text(&png, PNG_KEYWORD).unwrap().as_deref(),
        Some(meta.as_str())
    );
    // Stamping twice keeps one chunk.
    let twice = export::png_with_text(&png, PNG_KEYWORD, &meta).unwrap();
    assert_eq!(twice.len(), png.len());

    for (what, bytes) in [
        ("svg", svg.into_bytes()),
        ("json", json.into_bytes()),
        ("png", png),
        ("toml", s.to_toml_string().into_bytes()),
        ("scenario json", s.to_json_string().into_bytes()),
    ] {
        let imported = export::import(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        if let Some(d) = &imported.digest {
            assert_eq!(d, &digest, "{what} records the run's digest");
        }
        let again = Outcome::compute(&imported.scenario).unwrap();
        assert_eq!(
            format!("{:016x}", trace::digest(&again.events)),
            digest,
            "{what}: importing reproduces the run"
        );
    }
}

#[test]
fn imports_that_fail_say_what_and_where() {
    let cases: [(&[u8], &str); 5] = [
        (b"name = \"x\"\nduration_ms = [", "line 2"),
        (b"<svg></svg>", "carries no Lockstep run"),
        (b"\x89PNG\r\n\x1a\n", "carries no Lockstep run"),
        (b"\x89PNG\r\n\x1a\n\0\0\0\x05IHDR", "cut off"),
        (b"name = \"\xff\"", "byte 8"),
    ];
    for (bytes, why) in cases {
        let err = export::import(bytes).expect_err(why);
        assert!(err.contains(why), "{err} (expected {why:?})");
    }
}

#[test]
fn the_command_line_exports_what_the_app_exports() {
    let path = crate::scenarios_dir().join("05-fencing.toml");
    let mut s = scenario("05");
    s.seed = 4;
    let outcome = Outcome::compute(&s).unwrap();
    let link = format!(
        "https://example.org/app/{}",
        Link {
            version: share::LINK_VERSION,
            source: share::source_of("05-fencing.toml", &s),
            playhead_us: 0,
            zoom: 1,
            own_order: false,
            compare: None,
            digest: Some(trace::digest(&outcome.events)),
        }
        .to_fragment()
    );
    let expected = [
        ("svg", export::timeline_svg(&s, &outcome, Some(&link))),
        ("json", export::trace_json(&s, &outcome)),
        ("md", export::verdict_markdown(&s, &outcome, Some(&link))),
    ];
    for (format, want) in expected {
        let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args([
                "export",
                path.to_str().unwrap(),
                "--seed",
                "4",
                "--format",
                format,
            ])
            .args(["--link-base", "https://example.org/app/"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{format}");
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["export", path.to_str().unwrap(), "--format", "gif"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// The PNG the command line writes is the SVG's picture at twice its size, with its text drawn,
/// and importing it gives back the same run, as importing the page's PNG does.
#[test]
fn the_command_line_exports_a_png_that_imports_as_the_same_run() {
    let path = crate::scenarios_dir().join("05-fencing.toml");
    let mut s = scenario("05");
    s.seed = 4;
    let outcome = Outcome::compute(&s).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["export", path.to_str().unwrap(), "--seed", "4"])
        .args(["--format", "png"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = out.stdout;
    let imported = export::import(&png).expect("the PNG imports");
    assert_eq!(imported.scenario, s);
    assert_eq!(
        imported.digest.as_deref(),
        Some(format!("{:016x}", outcome.digest).as_str())
    );
    let svg = export::timeline_svg(&s, &outcome, None);
    let attr = |name: &str| -> u32 {
        let at = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        svg[at..].split('"').next().unwrap().parse().unwrap()
    };
    let picture = resvg::tiny_skia::Pixmap::decode_png(&png).expect("a PNG the decoder reads");
    assert_eq!(
        (picture.width(), picture.height()),
        (2 * attr("width"), 2 * attr("height"))
    );
    // The title is dark text at the top left: without a font it would be blank.
    let dark = (0..60u32)
        .flat_map(|y| (0..400u32).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let p = picture.pixel(x, y).unwrap();
            p.alpha() > 200 && u32::from(p.red()) + u32::from(p.green()) + u32::from(p.blue()) < 200
        })
        .count();
    assert!(dark > 500, "the title's text is drawn ({dark} dark pixels)");
}

/// A docs build that names its site once in `LOCKSTEP_LINK_BASE` gets the same files as with
/// `--link-base`, and the flag wins over the environment.
#[test]
fn the_site_address_can_come_from_the_environment() {
    let path = crate::scenarios_dir().join("05-fencing.toml");
    let export = |env: Option<&str>, flag: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockstep"));
        cmd.args(["export", path.to_str().unwrap(), "--format", "md"]);
        if let Some(flag) = flag {
            cmd.args(["--link-base", flag]);
        }
        match env {
            Some(env) => cmd.env("LOCKSTEP_LINK_BASE", env),
            None => cmd.env_remove("LOCKSTEP_LINK_BASE"),
        };
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let site = "https://docs.example.org/lockstep/";
    let from_env = export(Some(site), None);
    assert!(from_env.contains(&format!("]({site}#/run?")), "{from_env}");
    assert_eq!(from_env, export(None, Some(site)));
    assert_eq!(
        export(Some("https://other.example.org/"), Some(site)),
        from_env
    );
    assert!(!export(None, None).contains("#/run?"));
}

/// The share panel's state as the page drives it: controls ticked and unticked, origins typed
/// (one of them wrong), and the embed made from them.
#[test]
fn the_share_panel_is_a_reducer() {
    use lockstep::lesson::edit::Control;
    use lockstep::ui::sharing::{embed_controls, ShareAction, Sharing};
    let app = lockstep::ui::App::open("05-fencing.toml");
    let offered = embed_controls(&app.scenario);
    assert!(
        offered.contains(&Control::Fencing("accounts".into())),
        "{offered:?}"
    );
    let fencing = Control::Fencing("accounts".into());
    let panel = Sharing::default()
        .reduce(ShareAction::FlipControl(fencing.clone()))
        .reduce(ShareAction::FlipControl(Control::Seed))
        .reduce(ShareAction::FlipControl(Control::Seed))
        .reduce(ShareAction::Origins(
            "https://docs.example.org/, not an origin https://b.example".into(),
        ));
    assert_eq!(
        panel.controls,
        vec![fencing.clone()],
        "ticked twice is unticked"
    );
    let (good, bad) = panel.origins();
    assert_eq!(good, ["https://docs.example.org", "https://b.example"]);
    assert_eq!(bad.as_deref(), Some("not"));
    let embed = panel.embed(&app.link(), &app.scenario);
    assert_eq!(embed.controls, vec![fencing]);
    assert_eq!(embed.origins, good);
    assert_eq!(
        embed.link.source,
        app.link().source.for_embed(&app.scenario)
    );
    let said = panel
        .reduce(ShareAction::Status("Copied.".into()))
        .reduce(ShareAction::ImportStatus("Imported x.toml.".into()));
    assert_eq!(
        (said.status.as_str(), said.import_status.as_str()),
        ("Copied.", "Imported x.toml.")
    );
}

mod embed {
    use lockstep::lesson::edit::{Control, Edit};
    use lockstep::scenario::{Fencing, FencingChecks};
    use lockstep::ui::embed::{accept, reply, valid_origin, Embed, HostMessage, VerdictSummary};
    use lockstep::ui::share::Link;

    const HOST: &str = "https://docs.example.org";

    fn embed() -> Embed {
        let link = Link::from_query("v=1&b=05-fencing.toml&d=0000000000000000").unwrap();
        Embed::from_query(&format!(
            "{}&controls=fencing%20accounts&origins=https%3A%2F%2Fdocs.example.org,http%3A%2F%2Flocalhost%3A3000",
            link.to_query()
        ))
        .unwrap()
    }

    /// A listed host hears why a message was refused; an unlisted one hears nothing.
    #[test]
    fn the_host_api_talks_back_to_a_listed_host() {
        use lockstep::ui::embed::{read, stamp, Read, PROTOCOL};
        let e = embed();
        let refused = |data: &str| match read(&e, HOST, data) {
            Read::Refuse(why) => why,
            other => panic!("{data}: {other:?}"),
        };
        assert!(
            refused(r#"{"type":"lockstep:set-toggle","edit":"seed 99"}"#)
                .contains("does not offer")
        );
        // Each refusal says what is wrong with the message.
        for (data, words) in [
            (
                r#"{"type":"lockstep:fly"}"#,
                "\"lockstep:fly\" is not a type of message it reads",
            ),
            (
                r#"{"type":"lockstep:play","colour":1}"#,
                "unknown member \"colour\"",
            ),
            (
                r#"{"type":"lockstep:set-playhead","ms":"soon"}"#,
                "\"ms\" is not a number",
            ),
            (r#"{"type":"lockstep:set-toggle"}"#, "\"edit\" is missing"),
            (
                r#"{"type":"lockstep:get-state","id":-1}"#,
                "\"id\" is not a whole number",
            ),
            (r#"{"edit":"seed 1"}"#, "\"type\" is missing"),
            ("[1]", "the message is not a JSON object"),
        ] {
            let why = refused(data);
            assert!(
                why.starts_with("the message is not one the embed reads: ") && why.contains(words),
                "{data}: {why}"
            );
        }
        assert!(refused("not json").contains("not JSON"));
        assert!(refused(r#"{"type":"lockstep:play","protocol":2}"#).contains("protocol 2"));
        assert!(refused(&format!("\"{}\"", "x".repeat(5000))).contains("at most 4096"));
        assert_eq!(
            read(&e, HOST, r#"{"type":"lockstep:play","protocol":1}"#),
            Read::Accept(HostMessage::Play)
        );
        assert_eq!(
            read(&e, HOST, r#"{"type":"lockstep:get-state","id":3}"#),
            Read::Accept(HostMessage::GetState { id: Some(3) })
        );
        assert_eq!(
            read(&e, HOST, r#"{"type":"lockstep:get-link"}"#),
            Read::Accept(HostMessage::GetLink { id: None })
        );
        assert_eq!(
            read(&e, "https://evil.example.org", "not json"),
            Read::Ignore
        );
        // Every message from the embed carries the protocol and, when named, the embed's id.
        let m: serde_json::Value = serde_json::from_str(&stamp(
            &reply("height", None, None, Some(300)),
            Some("fig-2"),
        ))
        .unwrap();
        assert_eq!(m["protocol"], PROTOCOL);
        assert_eq!(m["embed"], "fig-2");
        assert_eq!(m["px"], 300);
        let named = Embed::from_query("b=05-fencing.toml&id=fig-2").unwrap();
        assert_eq!(named.id.as_deref(), Some("fig-2"));
        assert!(Embed::from_query("b=05-fencing.toml&id=a%20b").is_err());
        // The state a host asks for is the app's, in numbers and edit lines.
        let app = lockstep::ui::App::open("05-fencing.toml").reduce(lockstep::ui::Action::Toggle(
            lockstep::ui::toggles::Toggle::Fencing {
                resource: "accounts".into(),
                mode: Fencing::OneSource,
                checks: Some(FencingChecks::AllAccesses),
            },
        ));
        let s: serde_json::Value =
            serde_json::from_str(&lockstep::ui::embed::state_reply(&app, Some(4))).unwrap();
        assert_eq!(s["type"], "lockstep:state");
        assert_eq!(s["id"], 4);
        assert_eq!(s["edits"][0], "fencing accounts one_source all_accesses");
        assert_eq!(s["verdict"]["lost_updates"], 0);
    }

    #[test]
    fn an_embed_address_carries_its_theme_and_caption() {
        use lockstep::ui::embed::{theme_of, Theme};
        let query = "b=05-fencing.toml&theme=dark&caption=Fencing%2C%20live";
        let e = Embed::from_query(query).unwrap();
        assert_eq!(
            (e.theme, e.caption.as_deref()),
            (Theme::Dark, Some("Fencing, live"))
        );
        assert_eq!(Embed::from_query(&e.to_query()).unwrap(), e);
        assert_eq!(theme_of(query), Theme::Dark);
        assert_eq!(theme_of("b=05-fencing.toml"), Theme::Auto);
        let why = Embed::from_query("b=05-fencing.toml&theme=purple").unwrap_err();
        assert!(why.0.contains("not light, dark or auto"), "{}", why.0);
        let long = format!("b=05-fencing.toml&caption={}", "x".repeat(201));
        assert!(Embed::from_query(&long)
            .unwrap_err()
            .0
            .contains("200 characters"));
    }

    #[test]
    fn an_embed_address_reads_back_with_its_controls_and_origins() {
        let e = embed();
        assert_eq!(e.controls, vec![Control::Fencing("accounts".into())]);
        assert_eq!(
            e.origins,
            vec![HOST.to_string(), "http://localhost:3000".into()]
        );
        assert_eq!(Embed::from_query(&e.to_query()).unwrap(), e);
    }

    #[test]
    fn bad_embed_addresses_say_why() {
        for (query, why) in [
            (
                "v=1&b=05-fencing.toml&d=0000000000000000&origins=javascript:alert(1)",
                "is not an origin",
            ),
            (
                "v=1&b=05-fencing.toml&d=0000000000000000&origins=https://a.org/path",
                "is not an origin",
            ),
            (
                "v=1&b=05-fencing.toml&d=0000000000000000&controls=fencing%20nowhere",
                "no resource",
            ),
            (
                "v=1&b=05-fencing.toml&d=0000000000000000&controls=teleport",
                "unknown control",
            ),
        ] {
            let err = Embed::from_query(query).unwrap_err();
            assert!(err.0.contains(why), "{query}: {err}");
        }
        assert!(valid_origin("http://127.0.0.1:8081"));
        assert!(valid_origin("https://[::1]:8080"));
        assert!(!valid_origin("null"));
        assert!(!valid_origin("https://a.org:"));
    }

    #[test]
    fn the_host_api_accepts_only_listed_origins_known_shapes_and_allowed_controls() {
        let e = embed();
        let toggle =
            r#"{"type":"lockstep:set-toggle","edit":"fencing accounts one_source all_accesses"}"#;
        assert_eq!(
            accept(&e, HOST, toggle),
            Some(HostMessage::SetToggle(Edit::Fencing {
                resource: "accounts".into(),
                mode: Fencing::OneSource,
                checks: Some(FencingChecks::AllAccesses),
            }))
        );
        assert_eq!(
            accept(&e, HOST, r#"{"type":"lockstep:set-playhead","ms":1.5}"#),
            Some(HostMessage::SetPlayhead { us: 1500 })
        );
        assert_eq!(
            accept(&e, HOST, r#"{"type":"lockstep:play"}"#),
            Some(HostMessage::Play)
        );
        assert_eq!(
            accept(&e, HOST, r#"{"type":"lockstep:get-verdict","id":7}"#),
            Some(HostMessage::GetVerdict { id: Some(7) })
        );
        // Ignored: another origin (even a prefix of a listed one), a control not listed, unknown
        // shapes, extra fields, junk, and anything too long.
        for (origin, data) in [
            ("https://evil.example.org", toggle),
            ("https://docs.example.org.evil.org", toggle),
            ("null", toggle),
            (
                HOST,
                r#"{"type":"lockstep:set-toggle","edit":"partition on"}"#,
            ),
            (
                HOST,
                r#"{"type":"lockstep:set-toggle","edit":"fencing accounts sideways"}"#,
            ),
            (HOST, r#"{"type":"lockstep:launch"}"#),
            (HOST, r#"{"type":"lockstep:play","x":1}"#),
            (HOST, r#"{"type":"lockstep:set-playhead","ms":-1}"#),
            (HOST, "<script>"),
            (
                HOST,
                &format!(
                    r#"{{"type":"lockstep:get-verdict","pad":"{}"}}"#,
                    "x".repeat(5000)
                ),
            ),
        ] {
            assert_eq!(accept(&e, origin, data), None, "{origin} {data:.60}");
        }
    }

    #[test]
    fn replies_and_the_snippet_are_what_the_docs_say() {
        let e = embed();
        let (_, v) = crate::check(&crate::scenario("05"), 1);
        let summary = VerdictSummary::of("headline", &v, 0xabc);
        let r: serde_json::Value =
            serde_json::from_str(&reply("verdict", Some(&summary), Some(7), None)).unwrap();
        assert_eq!(r["type"], "lockstep:verdict");
        assert_eq!(r["id"], 7);
        assert_eq!(r["verdict"]["exclusion"], "broken");
        assert_eq!(r["verdict"]["digest"], "0000000000000abc");
        let snippet = e.snippet("https://lockstep.example.org/", "Fencing, live");
        for part in [
            "loading=\"lazy\"",
            "sandbox=\"allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox\"",
            "title=\"Fencing, live\"",
            "https://lockstep.example.org/#/embed?v=1&amp;b=05-fencing.toml",
            "<script src=\"https://lockstep.example.org/embed-size.js\" async></script>",
            "class=\"lockstep-embed\"",
        ] {
            assert!(snippet.contains(part), "{part}\n{snippet}");
        }
        // No inline style, which a strict Content-Security-Policy refuses: the sizing script
        // styles the frame's class.
        assert!(!snippet.contains("style="), "{snippet}");
        // The frame keeps its own origin (see Embed::snippet), and gets nothing more: no forms,
        // no top navigation, no downloads.
        for never in [
            "allow-forms",
            "allow-top-navigation",
            "allow-downloads",
            "allow-modals",
        ] {
            assert!(!snippet.contains(never), "{never}\n{snippet}");
        }
        // No inline script: the sizing is a file of the site, which trusts only its own frames.
        assert!(!snippet.contains("<script>"), "{snippet}");
        let sizing = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("static/embed-size.js"),
        )
        .expect("the sizing script");
        assert!(sizing.contains("e.source === frames[i].contentWindow"));
    }
}

mod app {
    use lockstep::ui::share::Link;
    use lockstep::ui::{Action, App};

    #[test]
    fn opening_a_link_shows_the_same_run_and_is_not_saved_until_changed() {
        let start = App::open("05-fencing.toml");
        let made = start
            .reduce(Action::NewSeed)
            .reduce(Action::Zoom(3))
            .reduce(Action::OwnOrder(true));
        let made = made.reduce(Action::Seek(made.outcome.end / 2));
        let link = made.link();
        let opened = App::open("01-two-services.toml").reduce(Action::OpenLink(
            Link::from_fragment(&link.to_fragment()).unwrap(),
        ));
        assert_eq!(opened.scenario, made.scenario);
        assert_eq!(opened.outcome.events, made.outcome.events);
        assert_eq!(
            (opened.zoom, opened.own_order, opened.time),
            (3, true, made.time)
        );
        assert_eq!(
            opened.notice, None,
            "same version, same run: nothing to say"
        );
        assert!(
            opened.linked,
            "a linked run is not saved over the user's work"
        );
        assert!(
            !opened.reduce(Action::NewSeed).linked,
            "until the user changes it"
        );
        assert!(
            opened.reduce(Action::StepForward).linked,
            "playback is not a change"
        );
    }

    #[test]
    fn a_link_whose_run_differs_says_so_quietly_and_truly_and_a_broken_one_keeps_the_page() {
        let app = App::open("05-fencing.toml");
        let mut link = app.link();
        let own = link.digest.expect("a digest");
        // The same run: nothing to say.
        let same = app.reduce(Action::OpenLink(link.clone()));
        assert_eq!((same.notice.clone(), same.link_note.clone()), (None, None));
        // Another digest with this format: the run is shown, with a quiet note that does not
        // blame another version (the link may have been edited).
        link.digest = Some(own ^ 1);
        let opened = app.reduce(Action::OpenLink(link.clone()));
        assert_eq!(
            opened.notice, None,
            "no banner for a run that still shows the scenario"
        );
        let note = opened.link_note.clone().expect("a note");
        assert!(
            note.contains(&format!("{:016x}", own ^ 1))
                && note.contains(&format!("{own:016x}"))
                && note.contains("the link was edited, or"),
            "{note}"
        );
        assert!(!note.contains("made by another version"), "{note}");
        // Any change of the scenario ends the note.
        assert_eq!(opened.reduce(Action::NewSeed).link_note, None);
        // Another format, read: it says which.
        link.version = 9;
        let note = app.reduce(Action::OpenLink(link)).link_note.unwrap();
        assert!(note.contains("link format 9"), "{note}");

        let before = App::open("07-three-services.toml");
        let failed = before.reduce(Action::LinkFailed(
            "the link has no trace digest (d=)".into(),
        ));
        assert_eq!(failed.scenario, before.scenario);
        assert!(failed.notice.unwrap().contains("no trace digest"));
    }

    /// Where an app left off, as the sandbox's bundle hands it to the studio's: through the
    /// hand-over's JSON, the only thing that crosses between the two.
    fn handed_over(app: &App) -> lockstep::ui::LeftOff {
        use lockstep::ui::handover::HandOver;
        let sent = HandOver::new("share", &app.left_off());
        let received = HandOver::from_json(&sent.to_json()).expect("a hand-over reads back");
        assert_eq!(received, sent, "the hand-over survives its trip");
        received.left_off().expect("its comparison reads")
    }

    /// Every built-in, with its controls changed and the view moved, goes on in the other
    /// bundle as it was; a hand-over of another version or a damaged one is none.
    #[test]
    fn the_hand_over_between_bundles_round_trips() {
        use lockstep::ui::handover::HandOver;
        for b in lockstep::builtin::ALL {
            let mut app = App::open(b.file).reduce(Action::Zoom(2));
            if let Some((_, flip)) = lockstep::ui::toggles::flips(&app.scenario).first().cloned() {
                app = app.reduce(Action::Toggle(flip));
            }
            let app = app.reduce(Action::Seek(app.outcome.end / 2));
            let mut want = app.left_off();
            want.saved.ran = None;
            assert_eq!(handed_over(&app), want, "{}", b.file);
            let resumed = App::resume(&handed_over(&app));
            assert_eq!(resumed.scenario, app.scenario, "{}", b.file);
            assert_eq!(resumed.outcome.digest, app.outcome.digest, "{}", b.file);
        }
        let json = HandOver::new("lab", &App::open("05-fencing.toml").left_off()).to_json();
        assert!(HandOver::from_json(&json.replace("\"version\":1", "\"version\":2")).is_none());
        assert!(HandOver::from_json(&json[..json.len() / 2]).is_none());
        assert!(HandOver::from_json("[]").is_none());
        // A member it does not know, or one of the wrong kind, makes it none too.
        assert!(HandOver::from_json(&json.replacen('{', "{\"weather\":1,", 1)).is_none());
        assert!(HandOver::from_json(&json.replace("\"linked\":false", "\"linked\":0")).is_none());
        assert!(json.contains("\"linked\":false"), "{json}");
        // Controls changed before the hand-over go with it.
        let toggled = App::open("05-fencing.toml").reduce(Action::Toggle(
            "pause.length 300".parse().expect("an edit line"),
        ));
        let handed = HandOver::new("lab", &toggled.left_off());
        assert!(handed.controls.is_some(), "the toggle is in the hand-over");
        assert_eq!(HandOver::from_json(&handed.to_json()), Some(handed));
    }

    /// The sandbox's bundle hands the page over to the studio's with where its app left off;
    /// the studio's app goes on with the same run, seen the same way.
    #[test]
    fn a_resumed_app_goes_on_where_the_other_left_off() {
        let left = App::open("05-fencing.toml")
            .reduce(Action::NewSeed)
            .reduce(Action::Zoom(4))
            .reduce(Action::OwnOrder(true))
            .reduce(Action::SpeedStep(1))
            .reduce(Action::Legend(false));
        let flip = lockstep::ui::toggles::flips(&left.scenario)[0].1.clone();
        let left = left.reduce(Action::Compare(Some(flip.clone())));
        let left = left.reduce(Action::Seek(left.outcome.end / 3));
        let resumed = App::resume(&handed_over(&left));
        assert_eq!(resumed.scenario, left.scenario);
        assert_eq!(resumed.outcome.events, left.outcome.events);
        assert_eq!(resumed.text, left.text);
        assert_eq!(
            (
                resumed.zoom,
                resumed.own_order,
                resumed.time,
                resumed.linked
            ),
            (4, true, left.time, false)
        );
        assert_eq!((resumed.speed, resumed.legend), (left.speed, false));
        assert_eq!(
            resumed.compare.as_ref().map(|c| c.toggle.clone()),
            Some(flip),
            "the comparison goes on"
        );
        assert_eq!(resumed.notice, None);

        // The user's own valid text, comments and all, then a text with errors: the run of
        // the valid one goes on, and discarding the broken edit gives the valid text back.
        let commented = format!("# my notes\n{}", left.text);
        let valid = left.reduce(Action::Edit(commented.clone()));
        assert!(valid.errors.is_empty());
        let broken = valid.reduce(Action::Edit(format!("{commented}\nnot toml at all")));
        assert!(!broken.errors.is_empty());
        assert_eq!(broken.scenario, left.scenario);
        let mut l = handed_over(&broken);
        l.linked = true;
        let resumed = App::resume(&l);
        assert_eq!(resumed.scenario, left.scenario);
        assert_eq!(resumed.outcome.events, left.outcome.events);
        assert_eq!(resumed.text, broken.text);
        assert_eq!(resumed.errors, broken.errors);
        assert!(resumed.linked);
        assert_eq!(resumed.reduce(Action::DiscardEdit).text, commented);
    }

    #[test]
    fn an_imported_scenario_replaces_the_run() {
        let app = App::open("05-fencing.toml");
        let other = crate::scenario("06");
        let next = app.reduce(Action::Import {
            scenario: Box::new(other.clone()),
            what: "timeline (SVG)".into(),
        });
        assert_eq!(next.scenario, other);
        assert!(next.notice.unwrap().contains("timeline (SVG)"));
    }
}

/// Each bundle of the page reads scenarios through its own codec: the course's reads
/// everything, the embed view's only JSON, and the sandbox's first bundle reads JSON itself and
/// its editor's TOML through a worker (`Codec::SANDBOX`, answered with `Action::Read`). Links
/// carry custom scenarios as JSON, so every bundle opens every link it makes; the same scenario
/// runs the same whichever reader it went through.
mod codecs {
    use lockstep::builtin;
    use lockstep::ui::share::{self, Link, Source};
    use lockstep::ui::{Action, App, Codec, Reading, Saved, BLANK, BLANK_JSON, BLANK_TOML};
    use lockstep::Scenario;

    const FENCING: &str = "05-fencing.toml";

    /// The reader's answer for the text an app waits for, as the page's worker gives it.
    fn answer(app: &App) -> App {
        assert!(app.reading, "the app waits for a reader");
        let reading =
            Reading::from_json(&serde_json::to_string(&Reading::of(app.text.clone())).unwrap())
                .unwrap();
        app.reduce(reading.into_action(app.codec))
    }

    /// What the sandbox saves and what its reader answers read back as written, by the hand
    /// readers the page uses; a member they do not know or of the wrong kind is refused, in
    /// words that name it.
    #[test]
    fn saved_states_and_readers_answers_read_back_as_written() {
        let edited = App::open(FENCING).reduce(Action::Edit("name = \"x\"\n".into()));
        let toggled = App::open(FENCING).reduce(Action::Edit(
            builtin::find(FENCING)
                .unwrap()
                .toml()
                .replace("lease_ms = 500", "lease_ms = 700"),
        ));
        for app in [App::open(FENCING), edited, toggled] {
            let saved = app.saved();
            let json = serde_json::to_string(&saved).unwrap();
            assert_eq!(Saved::from_json(&json).unwrap(), saved, "{json}");
        }
        for text in [
            builtin::find(FENCING).unwrap().toml().to_string(),
            "name = 1\n".to_string(),
            String::new(),
        ] {
            let reading = Reading::of(text);
            let json = serde_json::to_string(&reading).unwrap();
            assert_eq!(Reading::from_json(&json).unwrap(), reading, "{json}");
        }
        let refused = [
            (
                Saved::from_json(r#"{"source":"a","text":"","zoom":2}"#).err(),
                "unknown member \"zoom\"",
            ),
            (
                Saved::from_json(r#"{"source":"a"}"#).err(),
                "\"text\" is missing",
            ),
            (
                Saved::from_json(r#"{"source":"a","text":"","ran":{"json":1}}"#).err(),
                "\"json\"",
            ),
            (
                Reading::from_json(r#"{"text":"","errors":[{"location":"x"}]}"#).err(),
                "\"message\" is missing",
            ),
            (Reading::from_json("[]").err(), "not a JSON object"),
            (Reading::from_json("{").err(), "EOF"),
        ];
        for (e, words) in refused {
            let e = e.expect("refused");
            assert!(e.contains(words), "{e} should say {words}");
        }
    }

    #[test]
    fn every_shipped_scenario_reads_the_same_from_its_json() {
        for b in builtin::ALL {
            assert_eq!(
                Scenario::from_json_str(b.json).unwrap(),
                Scenario::from_toml_str(b.toml()).unwrap(),
                "{}",
                b.file
            );
        }
        assert_eq!(
            Scenario::from_json_str(BLANK_JSON).unwrap(),
            Scenario::from_toml_str(BLANK_TOML).unwrap()
        );
        for source in builtin::ALL.iter().map(|b| b.file).chain([BLANK]) {
            let full = App::open_with(Codec::FULL, source);
            for codec in [Codec::SANDBOX, Codec::EMBED] {
                let other = App::open_with(codec, source);
                assert_eq!(full.scenario, other.scenario, "{source} {codec:?}");
                assert_eq!(
                    full.outcome.digest, other.outcome.digest,
                    "{source} {codec:?}"
                );
            }
            // The sandbox shows the shipped file as written, comments and all.
            assert_eq!(App::open_with(Codec::SANDBOX, source).text, full.text);
        }
    }

    #[test]
    fn a_toggled_builtin_opens_alike_in_the_embed_and_the_app() {
        let app = App::open("05-fencing.toml").reduce(Action::NewSeed);
        let link = Link::from_fragment(&app.link().to_fragment()).unwrap();
        assert!(matches!(link.source, Source::Builtin { .. }));
        for codec in [Codec::EMBED, Codec::SANDBOX] {
            let other = App::open_with(codec, "01-two-services.toml")
                .reduce(Action::OpenLink(link.clone()));
            assert_eq!(other.notice, None);
            assert_eq!(other.outcome.digest, app.outcome.digest);
            // And back: its own link for it is the same built-in with the same change.
            assert_eq!(other.link().source, app.link().source);
        }
    }

    #[test]
    fn a_custom_scenario_travels_as_json_between_every_bundle() {
        let mut s = crate::scenario("06");
        s.name = "Our own partition".into();
        let app = App::open("06-partition.toml").reduce(Action::Show {
            scenario: Box::new(s.clone()),
            notice: String::new(),
        });
        let link = app.link();
        assert!(matches!(link.source, Source::Json { .. }));
        let fragment = link.to_fragment();
        assert!(fragment.contains("&j="), "{fragment}");
        assert!(!share::carries_toml(fragment.trim_start_matches("#/run?")));

        for codec in [Codec::EMBED, Codec::SANDBOX, Codec::FULL] {
            let other = App::open_with(codec, "01-two-services.toml")
                .reduce(Action::OpenLink(Link::from_fragment(&fragment).unwrap()));
            assert_eq!(other.notice, None, "{codec:?}");
            assert_eq!(other.scenario, s, "{codec:?}");
            assert_eq!(other.outcome.digest, app.outcome.digest, "{codec:?}");
            assert!(!other.reading, "{codec:?}: a link's JSON needs no reader");
            if codec.name != "EMBED" {
                assert_eq!(
                    other.text,
                    s.to_toml_string(),
                    "the editor shows it as TOML"
                );
            }
            // And its own link is the same JSON.
            assert_eq!(other.link().source, link.source, "{codec:?}");
        }
    }

    /// Earlier versions wrote a custom scenario as TOML (`c=`): the full app opens such a link,
    /// and the two bundles without a TOML reader refuse it and say where it opens.
    #[test]
    fn a_link_written_as_toml_opens_in_the_full_app_only() {
        let s = crate::scenario("06");
        let mut link = App::open("06-partition.toml").link();
        link.source = Source::Custom {
            toml: s.to_toml_string(),
        };
        link.digest = Some(App::open("06-partition.toml").outcome.digest);
        let fragment = link.to_fragment();
        assert!(share::carries_toml(fragment.trim_start_matches("#/run?")));
        let full = App::open_with(Codec::FULL, "01-two-services.toml")
            .reduce(Action::OpenLink(Link::from_fragment(&fragment).unwrap()));
        assert_eq!(full.notice, None);
        assert_eq!(full.scenario, s);
        for (codec, says) in [(Codec::SANDBOX, "full app"), (Codec::EMBED, "JSON (j=)")] {
            let other = App::open_with(codec, "01-two-services.toml")
                .reduce(Action::OpenLink(Link::from_fragment(&fragment).unwrap()));
            let notice = other.notice.unwrap();
            assert!(
                notice.contains(says) && notice.contains("full app"),
                "{notice}"
            );
            assert_eq!(other.scenario, App::open("01-two-services.toml").scenario);
        }
    }

    /// In the sandbox's first bundle an edit waits for the reader; the answer about the text
    /// shown runs it (or shows its errors) exactly as the full app's own reading does, and an
    /// answer about an older text changes nothing.
    #[test]
    fn an_edit_waits_for_the_reader_and_its_answer_runs_as_the_full_app_would() {
        let sandbox = App::open_with(Codec::SANDBOX, FENCING);
        let full = App::open(FENCING);
        let edited = full.text.replace("seed = 1", "seed = 7");
        assert_ne!(edited, full.text);

        let waiting = sandbox.reduce(Action::Edit(edited.clone()));
        assert!(waiting.reading);
        assert_eq!(waiting.text, edited);
        assert_eq!(
            waiting.outcome.digest, sandbox.outcome.digest,
            "the last valid run stays on screen until the answer"
        );
        let stale = Reading::of(full.text.clone()).into_action(Codec::SANDBOX);
        let still = waiting.reduce(stale);
        assert!(still.reading, "an answer about another text is ignored");
        assert_eq!(still.outcome.digest, sandbox.outcome.digest);

        let read = answer(&waiting);
        let expected = full.reduce(Action::Edit(edited.clone()));
        assert!(!read.reading);
        assert_eq!(read.scenario, expected.scenario);
        assert_eq!(read.outcome.digest, expected.outcome.digest);
        assert_eq!(
            (read.text.as_str(), read.valid_text.as_str()),
            (edited.as_str(), edited.as_str())
        );

        // A text with errors: the same located errors, over the last valid run.
        let broken = format!("{edited}\nnot toml at all");
        let read = answer(&read.reduce(Action::Edit(broken.clone())));
        let expected = expected.reduce(Action::Edit(broken));
        assert!(!read.errors.is_empty());
        assert_eq!(read.errors, expected.errors);
        assert_eq!(read.outcome.digest, expected.outcome.digest);

        // Going back to the text that ran needs no reader; discarding ends the wait.
        let back = read.reduce(Action::Edit(edited.clone()));
        assert!(!back.reading && back.errors.is_empty());
        let discarded = back
            .reduce(Action::Edit("x = ".into()))
            .reduce(Action::DiscardEdit);
        assert!(!discarded.reading);
        assert_eq!(discarded.text, edited);
    }

    /// A toggle while an edit is being read replaces the text as it replaces any text it
    /// rewrites: the edit can be restored, and the reader's late answer about it is ignored.
    #[test]
    fn a_toggle_while_reading_keeps_the_edit_to_restore() {
        let sandbox = App::open_with(Codec::SANDBOX, FENCING);
        let edited = format!("# mine\n{}", sandbox.text);
        let waiting = sandbox.reduce(Action::Edit(edited.clone()));
        let toggled = waiting.reduce(Action::NewSeed);
        assert!(!toggled.reading);
        assert_ne!(toggled.scenario.seed, sandbox.scenario.seed);
        assert_eq!(toggled.replaced_text.as_deref(), Some(edited.as_str()));
        let late = toggled.reduce(Reading::of(edited.clone()).into_action(Codec::SANDBOX));
        assert_eq!(
            late.text, toggled.text,
            "the late answer is about a text no longer shown"
        );
        let restored = toggled.reduce(Action::RestoreText);
        assert_eq!(restored.text, edited);
        let restored = answer(&restored);
        assert_eq!(restored.scenario, sandbox.scenario);
    }

    /// A link opened while a text is being read (the saved text of a returning visitor, say)
    /// stays a link's run when the late answer comes: it is ignored and does not make the link's
    /// run the user's own, which would be saved over their text.
    #[test]
    fn a_late_answer_leaves_a_links_run_a_link() {
        let sandbox = App::open_with(Codec::SANDBOX, FENCING);
        let waiting = sandbox.reduce(Action::Edit(format!("{}\n# mine", sandbox.text)));
        let link = App::open("06-partition.toml").link();
        let linked = waiting.reduce(Action::OpenLink(link));
        assert!(linked.linked && !linked.reading);
        let late = linked.reduce(Reading::of(waiting.text.clone()).into_action(Codec::SANDBOX));
        assert!(late.linked, "the late answer does not end the link's state");
        assert_eq!(late.outcome.digest, linked.outcome.digest);
        assert_eq!(late.text, linked.text);
    }

    /// A reader that could not load answers with why, so the editor never waits forever.
    #[test]
    fn a_reader_that_failed_says_so_in_the_editor() {
        let sandbox = App::open_with(Codec::SANDBOX, FENCING);
        let waiting = sandbox.reduce(Action::Edit(format!("{}\n# more", sandbox.text)));
        let failed = waiting.reduce(
            Reading::failed(waiting.text.clone(), "the network is down")
                .into_action(Codec::SANDBOX),
        );
        assert!(!failed.reading);
        assert!(failed.errors[0].message.contains("the network is down"));
        assert_eq!(failed.outcome.digest, sandbox.outcome.digest);
    }

    /// What the full app saves, the sandbox's first bundle restores without reading it: the
    /// same text and the same run at once. Only a text with errors waits for the reader (for its
    /// errors), and a state saved without its run is read from its text.
    #[test]
    fn a_saved_state_restores_at_once_in_the_sandbox() {
        let full = App::open(FENCING).reduce(Action::NewSeed);
        let commented = format!("# my notes\n{}", full.text);
        let full = full.reduce(Action::Edit(commented.clone()));
        let stored = serde_json::to_string(&full.saved()).unwrap();
        let back = App::restore_with(Codec::SANDBOX, Some(&stored));
        assert!(!back.reading);
        assert_eq!(back.text, commented);
        assert_eq!(back.scenario, full.scenario);
        assert_eq!(back.outcome.digest, full.outcome.digest);

        // With errors: the last valid run now, the errors once read.
        let broken = full.reduce(Action::Edit(format!("{commented}\n[[oops")));
        let stored = serde_json::to_string(&broken.saved()).unwrap();
        let back = App::restore_with(Codec::SANDBOX, Some(&stored));
        assert!(back.reading);
        assert_eq!(back.text, broken.text);
        assert_eq!(back.outcome.digest, full.outcome.digest);
        let back = answer(&back);
        assert_eq!(back.errors, broken.errors);
        assert_eq!(back.valid_text, commented);

        // Saved without its run (as the editor saves before running, or an older version).
        let bare = Saved {
            ran: None,
            ..full.saved()
        };
        let back = App::restore_with(Codec::SANDBOX, Some(&serde_json::to_string(&bare).unwrap()));
        assert!(back.reading);
        let back = answer(&back);
        assert_eq!(back.outcome.digest, full.outcome.digest);
        // A shipped scenario left as shipped saves no run at all.
        assert_eq!(App::open(FENCING).saved().ran, None);
    }
}

/// Every example link in the embedding guide opens to the very run it names: its scenario
/// reads, and the run's digest is the link's `d`, so a reader who follows one sees no notice
/// that the engine has changed since.
#[test]
fn the_documented_links_open_to_their_own_run() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/embedding.md");
    let page = std::fs::read_to_string(path).unwrap();
    let mut links = 0;
    for line in page.lines() {
        for (start, _) in line.match_indices("/lockstep/#/") {
            let rest = &line[start + "/lockstep/#/".len()..];
            let end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, '"' | ')' | '`' | '<'))
                .unwrap_or(rest.len());
            let query = rest[..end].replace("&amp;", "&");
            let query = query.split_once('?').expect("a link has a query").1;
            // An embed link's display fields are not a permalink's; keep what a run needs.
            let kept: Vec<&str> = query
                .split('&')
                .filter(|f| {
                    !["controls=", "origins=", "id=", "theme=", "caption="]
                        .iter()
                        .any(|field| f.starts_with(field))
                })
                .collect();
            let link = Link::from_query(&kept.join("&"))
                .unwrap_or_else(|e| panic!("{query}: the documented link does not read: {e}"));
            let scenario = link
                .source
                .scenario()
                .expect("the linked scenario is valid");
            assert_eq!(
                format!("{:016x}", digest_of(&scenario)),
                format!("{:016x}", link.digest.unwrap_or_default()),
                "{query}: the documented link's digest is not its run's"
            );
            links += 1;
        }
    }
    assert!(links >= 4, "docs/embedding.md has {links} links");
}

/// The README recipe of the embedding guide, run as written: its command writes a picture whose
/// link to the live run is the very link the Markdown block puts around the picture.
#[test]
fn the_readme_recipe_runs_as_written() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/embedding.md")).unwrap();
    let recipe = &page[page
        .find("**A README on a code host**")
        .expect("the recipe")..];
    let block = |lang: &str| -> String {
        let open = recipe.find(&format!("```{lang}\n")).expect("the block") + lang.len() + 4;
        let body = &recipe[open..];
        body[..body.find("```").unwrap()]
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let command = block("sh");
    let (command, target) = command
        .split_once(" > ")
        .expect("the command writes a file");
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "lockstep");
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(&words[1..])
        .current_dir(root)
        .env_remove("LOCKSTEP_LINK_BASE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = String::from_utf8(out.stdout).unwrap();
    let markdown = block("markdown");
    let picture = format!("]({})]", target.trim());
    assert!(markdown.contains(&picture), "{markdown} shows {target}");
    let link = markdown
        .trim()
        .rsplit_once("](")
        .unwrap()
        .1
        .trim_end_matches(')');
    let href = svg
        .split(" href=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the picture links to the live run")
        .replace("&amp;", "&");
    assert_eq!(link, href, "the Markdown's link is the picture's own");
}

/// An embed never shows a run its address does not name: a scenario that is not shipped, or
/// one that does not read, is the address's error (the reason, and no run), and the address
/// still names itself in the error.
#[test]
fn an_embed_of_a_scenario_it_cannot_read_shows_no_run() {
    use lockstep::ui::embed::{id_of, open, Embed, COURSE_FRAGMENT};
    use lockstep::ui::Codec;
    for (query, says) in [
        (
            "b=08-staggered.toml",
            "no built-in scenario \"08-staggered.toml\"",
        ),
        ("v=1&b=nothing-here.toml&id=fig-2", "no built-in scenario"),
        (
            "b=05-fencing.toml&e=fencing%20nowhere%20one_source",
            "nowhere",
        ),
        ("j=AAAA", "not deflate"),
    ] {
        let why = Embed::from_query(query).expect_err(query);
        assert!(why.0.contains(says), "{query}: {}", why.0);
    }
    // A TOML scenario (c=) is read where the full bundle is loaded, and refused where it is not.
    let toml = lockstep::ui::App::open("06-partition.toml")
        .scenario
        .to_toml_string();
    let mut link = lockstep::ui::App::open("06-partition.toml").link();
    link.source = lockstep::ui::share::Source::Custom { toml };
    let query = link.to_query();
    assert!(Embed::from_query_with(Codec::FULL, &query).is_ok());
    let why = Embed::from_query(&query).expect_err("the embed's codec reads no TOML");
    assert!(why.0.contains("j="), "{}", why.0);
    // A readable address opens its own run, at its end unless it gives a playhead.
    let e = Embed::from_query("b=05-fencing.toml&id=fig-2").unwrap();
    let app = open(Codec::EMBED, &e).expect("the run opens");
    assert_eq!(app.source, "05-fencing.toml");
    assert_eq!(app.time, app.outcome.end);
    assert_eq!(id_of("b=nothing.toml&id=fig-2"), Some("fig-2".to_string()));
    assert_eq!(id_of("b=nothing.toml&id=a%20b"), None);
    assert_eq!(COURSE_FRAGMENT, "#/lessons");
}

/// The host API's requests as the embed handles them: every request may carry an id, which
/// its answer and its error echo; a playhead past the end is answered with the one used; a
/// value a listed control cannot take is an error for the host, and the run stays; the theme
/// switches without a reload.
#[test]
fn the_host_api_answers_each_request_by_its_id() {
    use lockstep::ui::embed::{handle, open, read, refusal, request_id, Embed, Read, Theme};
    use lockstep::ui::Codec;
    const HOST: &str = "https://docs.example.org";
    let e = Embed::from_query(
        "v=1&b=06-partition.toml&controls=partition&origins=https%3A%2F%2Fdocs.example.org",
    )
    .unwrap();
    let app = open(Codec::EMBED, &e).unwrap();
    let json = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
    let accept = |data: &str| match read(&e, HOST, data) {
        Read::Accept(m) => m,
        other => panic!("{data}: {other:?}"),
    };
    let answer = |data: &str| {
        let h = handle(&app, accept(data), request_id(data));
        (h.action, h.theme, h.reply.map(|r| json(&r)))
    };

    // Past the end: clamped, answered with the playhead used, even without an id.
    let (action, _, reply) = answer(r#"{"type":"lockstep:set-playhead","ms":1e9,"id":4}"#);
    assert!(action.is_some());
    let reply = reply.expect("a playhead is always answered");
    assert_eq!(reply["type"], "lockstep:state");
    assert_eq!(reply["id"], 4);
    assert_eq!(reply["playhead_ms"], app.outcome.end as f64 / 1000.0);
    let (_, _, reply) = answer(r#"{"type":"lockstep:set-playhead","ms":100}"#);
    assert_eq!(reply.unwrap()["playhead_ms"], 100.0);

    // Play: answered with the playhead it plays from when asked with an id; silent without.
    let (_, _, reply) = answer(r#"{"type":"lockstep:play","id":5}"#);
    let reply = reply.unwrap();
    assert_eq!(
        (reply["id"].clone(), reply["playing"].clone()),
        (5.into(), true.into())
    );
    assert_eq!(
        answer(r#"{"type":"lockstep:pause"}"#).2,
        None,
        "paused already, and no id"
    );

    // A listed control with a value the scenario refuses: an error with the id, and no change.
    let bad = r#"{"type":"lockstep:set-toggle","edit":"partition.length 4000000","id":6}"#;
    let (action, _, reply) = answer(bad);
    assert!(action.is_none(), "the run stays as it was");
    let reply = reply.unwrap();
    assert_eq!(reply["type"], "lockstep:error");
    assert_eq!(reply["id"], 6);
    assert!(
        reply["error"]
            .as_str()
            .unwrap()
            .contains("partition.length 4000000"),
        "{reply}"
    );
    // A good one: the state after it, with the id.
    let (action, _, reply) =
        answer(r#"{"type":"lockstep:set-toggle","edit":"partition off","id":7}"#);
    assert!(action.is_some());
    let reply = reply.unwrap();
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["edits"], serde_json::json!(["partition off"]));

    // The theme, with its answer.
    let (_, theme, reply) = answer(r#"{"type":"lockstep:set-theme","theme":"dark","id":8}"#);
    assert_eq!(theme, Some(Theme::Dark));
    assert_eq!(
        reply.unwrap(),
        serde_json::json!({"type": "lockstep:theme", "theme": "dark", "id": 8})
    );
    assert_eq!(
        answer(r#"{"type":"lockstep:set-theme","theme":"auto"}"#).1,
        Some(Theme::Auto)
    );

    // Refusals carry the id of the request they refuse.
    for (data, says) in [
        (
            r#"{"type":"lockstep:set-theme","theme":"sepia","id":9}"#,
            "sepia",
        ),
        (
            r#"{"type":"lockstep:set-toggle","edit":"seed 3","id":9}"#,
            "does not offer",
        ),
        (r#"{"type":"lockstep:dance","id":9}"#, "dance"),
    ] {
        let Read::Refuse(why) = read(&e, HOST, data) else {
            panic!("{data} is refused")
        };
        assert!(why.contains(says), "{data}: {why}");
        let r = json(&refusal(&why, request_id(data)));
        assert_eq!(
            (r["type"].clone(), r["id"].clone()),
            ("lockstep:error".into(), 9.into())
        );
    }
    assert!(matches!(
        read(&e, HOST, r#"{"type":"lockstep:play","id":"x"}"#),
        Read::Refuse(_)
    ));
    assert!(matches!(
        read(&e, HOST, r#"{"type":"lockstep:get-height","id":2}"#),
        Read::Accept(_)
    ));
}

/// The share panel's snippet carries the theme, caption and id chosen, and leaves out an id
/// that cannot be one, naming it.
#[test]
fn the_share_panel_offers_theme_caption_and_id() {
    use lockstep::ui::embed::{Embed, Theme};
    use lockstep::ui::sharing::{ShareAction, Sharing};
    let app = lockstep::ui::App::open("05-fencing.toml");
    let panel = Sharing::default()
        .reduce(ShareAction::Theme(Theme::Dark))
        .reduce(ShareAction::Caption("  The stale write, refused. ".into()))
        .reduce(ShareAction::Id("fig-2".into()));
    let embed = panel.embed(&app.link(), &app.scenario);
    let back = Embed::from_query(&embed.to_query()).unwrap();
    assert_eq!(back.theme, Theme::Dark);
    assert_eq!(back.caption.as_deref(), Some("The stale write, refused."));
    assert_eq!(back.id.as_deref(), Some("fig-2"));
    let bad = panel.reduce(ShareAction::Id("fig 2".into()));
    assert_eq!(bad.embed_id(), Err("fig 2".to_string()));
    assert_eq!(bad.embed(&app.link(), &app.scenario).id, None);
    let blank = Sharing::default();
    let plain = blank.embed(&app.link(), &app.scenario);
    assert_eq!(
        (plain.theme, plain.caption, plain.id),
        (Theme::Auto, None, None)
    );
}

/// A broken embed address still knows whom to tell: the origins it lists are read on their
/// own, and the error message carries the reason and no run.
#[test]
fn a_broken_embed_address_tells_its_listed_origins_why() {
    use lockstep::ui::embed::{error_reply, origins_of, Embed};
    let query = "v=1&b=05-fencing.toml&d=43c926a68f15ef52&controls=fencing%20nowhere&origins=https%3A%2F%2Fdocs.example.org%2Cnot%20an%20origin";
    let why = Embed::from_query(query).expect_err("an origin that is not one");
    assert!(why.0.contains("not an origin"), "{}", why.0);
    let controls = Embed::from_query(
        "v=1&b=05-fencing.toml&d=43c926a68f15ef52&controls=fencing%20nowhere&origins=https%3A%2F%2Fdocs.example.org",
    )
    .expect_err("an unknown resource in the controls");
    assert!(controls.0.contains("nowhere"), "{}", controls.0);
    assert_eq!(
        origins_of(query),
        vec!["https://docs.example.org".to_string()]
    );
    assert!(origins_of("v=1&b=05-fencing.toml").is_empty());
    let m: serde_json::Value = serde_json::from_str(&error_reply(&why.0)).unwrap();
    assert_eq!(m["type"], "lockstep:error");
    assert_eq!(m["error"], why.0.as_str());
    assert_eq!(
        m.as_object().unwrap().len(),
        2,
        "the reason and nothing of a run"
    );
}

/// A link for a fault turned off or moved travels as the edit, not as the whole scenario.
#[test]
fn a_fault_changed_with_its_control_travels_as_its_edit() {
    for (file, toggles) in [
        ("05-fencing.toml", vec![Toggle::Pause(false)]),
        ("06-partition.toml", vec![Toggle::PartitionLength(250)]),
        (
            "03-fixed-order.toml",
            vec![Toggle::Outage {
                service: "east-locks".into(),
                on: false,
            }],
        ),
        (
            "09-migration-held.toml",
            vec![Toggle::MigrationMode(
                lockstep::scenario::MigrationMode::Drain,
            )],
        ),
    ] {
        let mut app = lockstep::ui::App::open(file);
        for t in toggles {
            app = app.reduce(lockstep::ui::Action::Toggle(t));
        }
        let link = app.link();
        let share::Source::Builtin { file: f, edits } = &link.source else {
            panic!(
                "{file}: the link carries the whole scenario: {:?}",
                link.source
            );
        };
        assert_eq!(f, file);
        assert!(!edits.is_empty() && edits.len() <= 4, "{file}: {edits:?}");
        assert!(
            link.to_fragment().len() < 200,
            "{file}: {}",
            link.to_fragment()
        );
        assert_eq!(
            link.source.scenario().unwrap(),
            app.scenario,
            "{file}: the same run"
        );
    }
}

/// A link over the size limit says so, in the words of the limit, rather than "no view".
#[test]
fn a_link_over_the_size_limit_says_how_long_it_is() {
    use lockstep::ui::route::Route;
    let long = format!(
        "#/run?v=1&b=05-fencing.toml&x={}",
        "a".repeat(LINK_SCENARIO_BYTES_MAX.max(300 * 1024))
    );
    let Route::Run(query) = Route::parse(&long) else {
        panic!("a long link is still a link");
    };
    let why = Link::from_query(&query).unwrap_err();
    assert!(
        why.0.contains("bytes long; links are read up to"),
        "{}",
        why.0
    );
    assert!(matches!(
        Route::parse(&format!("#/{}", "a".repeat(300 * 1024))),
        Route::NotFound(_)
    ));
}

/// A run opened from a link or an imported picture that is a built-in with its controls
/// changed names the built-in in the picker, and Reset goes back there (not to a blank one).
#[test]
fn a_linked_or_imported_builtin_keeps_its_name() {
    use lockstep::ui::{Action, App};
    let edited = App::open("05-fencing.toml").reduce(Action::Toggle(Toggle::Pause(false)));
    // As a JSON link (what an older page or another tool may write).
    let mut link = edited.link();
    link.source = Source::Json {
        json: edited.scenario.to_json_string(),
    };
    let opened = App::open("01-two-services.toml").reduce(Action::OpenLink(link));
    assert_eq!(opened.source, "05-fencing.toml");
    assert_eq!(opened.scenario, edited.scenario);
    let reset = opened.reduce(Action::Pick(opened.source.clone()));
    assert_eq!(reset.scenario, App::open("05-fencing.toml").scenario);
    // As an imported picture.
    let imported = App::open("01-two-services.toml").reduce(Action::Import {
        scenario: Box::new(edited.scenario.clone()),
        what: "picture".into(),
    });
    assert_eq!(imported.source, "05-fencing.toml");
    // A scenario no built-in describes stays a scenario of its own.
    let mut other = edited.scenario.clone();
    other.duration_ms += 1;
    let imported = App::open("01-two-services.toml").reduce(Action::Import {
        scenario: Box::new(other),
        what: "picture".into(),
    });
    assert_eq!(imported.source, lockstep::ui::BLANK);
}

/// The exported picture says the whole headline, on as many lines as it takes.
#[test]
fn the_exported_svg_shows_the_whole_headline() {
    for b in builtin::ALL {
        let s = Scenario::from_toml_str(b.toml()).unwrap();
        let outcome = Outcome::compute(&s).unwrap();
        let svg = export::timeline_svg(&s, &outcome, None);
        let start = svg.find("<text x=\"12\" y=\"42\"").expect("the headline");
        let end = start + svg[start..].find("</text>").unwrap();
        let shown: Vec<String> = svg[start..end]
            .split("<tspan")
            .skip(1)
            .map(|t| {
                let text = &t[t.find('>').unwrap() + 1..];
                text.trim_end_matches("</tspan>")
                    .replace("&amp;", "&")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&apos;", "'")
            })
            .collect();
        assert_eq!(shown.join(" "), outcome.headline, "{}", b.file);
        assert!(!svg[start..end].contains('…'), "{}", b.file);
    }
}

/// A narrow frame's one-line verdict names what a reader checks first.
#[test]
fn a_narrow_embed_says_the_verdict_in_one_line() {
    use lockstep::ui::embed::short_headline;
    let line =
        |file: &str| short_headline(&Outcome::compute(&scenario(&file[..2])).unwrap().verdict);
    let fencing = line("05");
    assert!(
        fencing.starts_with("Exclusion broken: ") && fencing.contains("1 lost update"),
        "{fencing}"
    );
    assert!(
        !fencing.contains("granted"),
        "one line, not the sentence: {fencing}"
    );
    let deadlock = line("02");
    assert!(deadlock.contains("deadlock"), "{deadlock}");
}

/// A picture the page made carries its playhead, and importing it puts the playhead back.
#[test]
fn an_exported_picture_keeps_its_playhead() {
    use lockstep::ui::export::RunMeta;
    use lockstep::ui::{Action, App};
    let s = scenario("05");
    let outcome = Outcome::compute(&s).unwrap();
    let meta = RunMeta::of(&s, &outcome).at(552_000);
    let svg = export::timeline_svg_with(&s, &outcome, &meta, None);
    let imported = export::import(svg.as_bytes()).unwrap();
    assert_eq!(imported.playhead_us, Some(552_000));
    // As the page does it: the import, then the playhead.
    let app = App::open("01-two-services.toml")
        .reduce(Action::Import {
            scenario: Box::new(imported.scenario),
            what: "timeline (SVG)".into(),
        })
        .reduce(Action::Seek(imported.playhead_us.unwrap()));
    assert_eq!(app.time, 552_000);
    assert_eq!(app.outcome.digest, outcome.digest);
    // A picture from the command line, or an older one, has none: nothing moves.
    let plain = export::import(export::timeline_svg(&s, &outcome, None).as_bytes()).unwrap();
    assert_eq!(plain.playhead_us, None);
}

/// The exported picture draws the notes the page draws: each decisive moment's tag with its
/// letter, and its full sentence as the tag's title.
#[test]
fn the_exported_svg_draws_the_notes() {
    let s = scenario("05");
    let outcome = Outcome::compute(&s).unwrap();
    let svg = export::timeline_svg(&s, &outcome, None);
    let notes = &outcome.layout.notes;
    assert!(!notes.is_empty());
    assert_eq!(
        svg.matches("<g class=\"note\"").count(),
        notes.len().min(24),
        "one tag a note"
    );
    for n in notes.iter().take(24) {
        let title = format!(
            "<title>{}</title>",
            n.text
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        );
        assert!(svg.contains(&format!("data-note=\"{}\"", n.kind.name())));
        assert!(
            svg.contains(&title) || svg.contains(&n.text.replace('\'', "&apos;")),
            "{}",
            n.text
        );
    }
    assert!(svg.contains(">L</text>"), "the lost update's letter");
}
