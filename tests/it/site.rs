//! The site's manifest (`site.json`) against what builds and runs the site: Cargo's entry
//! points, `index.html`'s bundles, the split profiles, the Rust router and the page's router made
//! from the manifest (run in node exactly as the loader runs it), and the bounds the offline
//! copy and the lesson preview share with the app. A change to one side alone fails here,
//! naming what differs.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

use lockstep::ui::route::{Route, HASH_CHARS_MAX};
use serde_json::Value;

use crate::root;

fn manifest() -> Value {
    let text = std::fs::read_to_string(root().join("site.json")).expect("site.json");
    serde_json::from_str(&text).expect("site.json is JSON")
}

fn bundles(m: &Value) -> Vec<&Value> {
    m["bundles"].as_array().expect("bundles").iter().collect()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn each_bundle_of_the_manifest_is_an_entry_point_a_bundle_of_the_page_and_its_profile() {
    let m = manifest();
    let cargo: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let bins = cargo["bin"].as_array().unwrap();
    let html = std::fs::read_to_string(root().join("index.html")).unwrap();
    // Every `<link data-trunk rel="rust" …>` of the page, by its data-bin.
    let links: Vec<(String, String)> = html
        .split("<link data-trunk rel=\"rust\"")
        .skip(1)
        .map(|l| {
            let tag = &l[..l.find('>').unwrap()];
            let bin = tag.split("data-bin=\"").nth(1).unwrap();
            (bin[..bin.find('"').unwrap()].to_string(), tag.to_string())
        })
        .collect();
    let named: BTreeSet<&str> = bundles(&m).iter().map(|b| str_of(b, "name")).collect();
    let built: BTreeSet<&str> = links.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        named, built,
        "site.json's bundles and index.html's data-bin links differ"
    );
    for b in bundles(&m) {
        let name = str_of(b, "name");
        let entry = str_of(b, "entry");
        assert!(
            bins.iter().any(
                |bin| bin["name"].as_str() == Some(name) && bin["path"].as_str() == Some(entry)
            ),
            "{name}: Cargo.toml has no [[bin]] name = \"{name}\" path = \"{entry}\""
        );
        let tag = &links.iter().find(|(n, _)| n == name).unwrap().1;
        let split = b["split"].as_bool().unwrap_or(false);
        let profile = root().join(format!("scripts/split/{name}.txt"));
        // A split bundle keeps its function names through wasm-opt for its profile to name
        // them, and has a profile; the others have neither.
        assert_eq!(
            tag.contains(" -g\""),
            split,
            "{name}: index.html's wasm-opt keeps names (-g) exactly when site.json splits it"
        );
        assert_eq!(
            profile.exists(),
            split,
            "{name}: scripts/split/{name}.txt exists exactly when site.json splits it"
        );
    }
    // The links are the manifest's, attribute for attribute (written by `node scripts/site.mjs
    // --write`, which checks them with `--check`).
    let checked = Command::new("node")
        .arg(root().join("scripts/site.mjs"))
        .arg("--check")
        .output()
        .expect("node runs scripts/site.mjs (scripts/install.sh installs it)");
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    // Each view a reader lands on names a bundle of the manifest, or none (the preview).
    for v in m["views"].as_array().unwrap() {
        if let Some(b) = v["bundle"].as_str() {
            assert!(named.contains(b), "view {} names no bundle {b}", v["view"]);
        }
        assert!(v["budgetKB"].as_f64().is_some_and(|kb| kb > 0.0));
    }
}

/// The route's name as site.json spells it: its variant's.
fn route_name(r: &Route) -> String {
    let debug = format!("{r:?}");
    debug
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap()
        .to_string()
}

fn route_ids(r: &Route) -> Vec<String> {
    match r {
        Route::Lesson { lesson, place } => std::iter::once(lesson.clone())
            .chain(place.clone())
            .collect(),
        _ => Vec::new(),
    }
}

/// One route of each kind. The match below does not compile until a new kind of route is
/// listed here too, so that its fragment is among those tried.
fn each_kind() -> Vec<Route> {
    let kinds = vec![
        Route::Sandbox,
        Route::Course,
        Route::Lesson {
            lesson: "fencing".into(),
            place: Some("stale-write".into()),
        },
        Route::Facilitator,
        Route::Run("v=1&b=01-two-services.toml".into()),
        Route::Embed("v=1&b=01-two-services.toml".into()),
        Route::NotFound("/nowhere".into()),
    ];
    for k in &kinds {
        match k {
            Route::Sandbox
            | Route::Course
            | Route::Lesson { .. }
            | Route::Facilitator
            | Route::Run(_)
            | Route::Embed(_)
            | Route::NotFound(_) => {}
        }
    }
    kinds
}

/// Fragments over every route and its edges: one of each kind of route, each path the manifest
/// names, with ids good and bad, trailing slashes, queries with and without a TOML scenario,
/// anchors, and fragments longer than a link may be; then many made at random from the same
/// pieces.
fn fragments(m: &Value) -> Vec<String> {
    let segments = [
        "",
        "lessons",
        "sandbox",
        "facilitator",
        "run",
        "embed",
        "fencing",
        "a_b-9",
        "..",
        "Lessons",
        "run?c=1",
        "é",
        &"x".repeat(40),
        &"x".repeat(41),
    ];
    let queries = [
        "", "?", "?c=1", "?j=abc", "?j=1&c=2", "?jc=1", "?cc=1", "?x=1&c=", "?c", "?a=c=1",
    ];
    let mut out: Vec<String> = vec![
        String::new(),
        "#".into(),
        "#/".into(),
        "#//".into(),
        "#top".into(),
        "#?c=1".into(),
        "/lessons".into(),
        "lessons".into(),
    ];
    out.extend(each_kind().iter().map(Route::to_hash));
    for row in m["router"]["routes"].as_array().unwrap() {
        for path in row["paths"].as_array().unwrap() {
            let path = path.as_str().unwrap().replace(":id", "fencing");
            out.push(format!("#{path}"));
            out.push(format!("#{path}?c=1"));
        }
    }
    for a in segments {
        for q in queries {
            for slash in ["", "/"] {
                out.push(format!("#/{a}{slash}{q}"));
            }
        }
        for b in segments {
            out.push(format!("#/{a}/{b}"));
            out.push(format!("#/{a}/{b}/"));
            out.push(format!("#/{a}/{b}?c=1"));
            for c in ["", "fencing", "x/y"] {
                out.push(format!("#/{a}/{b}/{c}"));
            }
        }
    }
    // A simple generator, so that the same fragments are tried on every run.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % n
    };
    let pieces = [
        "/",
        "/",
        "/",
        "lessons",
        "run",
        "embed",
        "sandbox",
        "facilitator",
        "x",
        "?",
        "&",
        "c=",
        "c",
        "=",
        "j=",
        "-",
        "_",
        "#",
    ];
    for _ in 0..3000 {
        let mut f = String::from("#");
        for _ in 0..next(7) {
            f.push_str(pieces[next(pieces.len())]);
        }
        out.push(f);
    }
    // Longer than any link: only a run or an embed is still read (and then refused).
    let long = "j".repeat(HASH_CHARS_MAX);
    for head in [
        "#/run?",
        "#/embed?",
        "#/run/?",
        "#/lessons?",
        "#/embed?c=",
        "#/run?j=1&c=",
        "#x",
    ] {
        out.push(format!("{head}{long}"));
    }
    out.push(format!("#/lessons/{}", "a".repeat(HASH_CHARS_MAX)));
    out.push(format!("#/run?{}", "j".repeat(HASH_CHARS_MAX - 7)));
    out
}

#[test]
fn the_pages_router_opens_every_route_with_the_bundle_ui_route_names() {
    let m = manifest();
    let router = &m["router"];
    assert_eq!(
        router["hashCharsMax"].as_u64(),
        Some(HASH_CHARS_MAX as u64),
        "site.json's hashCharsMax is ui::route::HASH_CHARS_MAX"
    );
    assert_eq!(
        router["hostProtocol"].as_u64(),
        Some(u64::from(lockstep::ui::embed::PROTOCOL)),
        "site.json's hostProtocol is ui::embed::PROTOCOL"
    );
    // Every variant of Route has its row, and each row's bundle is the one Route::bundle names.
    let rows = router["routes"].as_array().unwrap();
    let fragments = fragments(&m);
    let mut seen = BTreeSet::new();
    for f in &fragments {
        let r = Route::parse(f);
        let name = route_name(&r);
        let row = rows
            .iter()
            .find(|row| row["route"] == name.as_str())
            .unwrap_or_else(|| panic!("site.json's router has no row for {name}"));
        let toml = lockstep::ui::share::carries_toml(f.split_once('?').map_or("", |x| x.1));
        let bundle = match row["tomlBundle"].as_str() {
            Some(b) if toml => b,
            _ => str_of(row, "bundle"),
        };
        assert_eq!(
            r.bundle().name(),
            bundle,
            "{name}: Route::bundle and site.json differ (at {})",
            &f[..f.len().min(80)]
        );
        seen.insert(name);
    }
    let rows_named: BTreeSet<String> = rows
        .iter()
        .map(|r| str_of(r, "route").to_string())
        .collect();
    assert_eq!(
        seen, rows_named,
        "every route of site.json is met, and no other"
    );

    // The page's router, as the loader runs it, over the same fragments.
    let script = format!(
        "import {{ manifest, routerCode }} from {:?};\n\
         const pick = (0, eval)(routerCode(manifest()));\n\
         let input = '';\n\
         process.stdin.setEncoding('utf8');\n\
         process.stdin.on('data', (d) => (input += d));\n\
         process.stdin.on('end', () => {{\n\
           const out = JSON.parse(input).map((h) => {{ const w = pick(h); return [w.route, w.bundle, w.ids]; }});\n\
           process.stdout.write(JSON.stringify(out));\n\
         }});",
        root().join("scripts/site.mjs").to_string_lossy()
    );
    let mut node = Command::new("node")
        .args(["--input-type=module", "-e", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs the page's router (scripts/install.sh installs it)");
    let input = serde_json::to_string(&fragments).unwrap();
    let mut stdin = node.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = node.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "node failed");
    let picked: Vec<(String, String, Vec<String>)> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(picked.len(), fragments.len());
    let mut differ = Vec::new();
    for (f, (route, bundle, ids)) in fragments.iter().zip(&picked) {
        let r = Route::parse(f);
        let rust = (route_name(&r), r.bundle().name().to_string(), route_ids(&r));
        if rust != (route.clone(), bundle.clone(), ids.clone()) {
            differ.push(format!(
                "{}: ui::route {rust:?}, the page {:?}",
                &f[..f.len().min(60)],
                (route, bundle, ids)
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} fragments differ:\n{}",
        differ.len(),
        fragments.len(),
        differ[..differ.len().min(20)].join("\n")
    );
}

#[test]
fn the_offline_copy_reads_the_folder_as_the_app_does() {
    let m = manifest();
    assert_eq!(
        m["offline"]["folderIndex"].as_str(),
        Some(lockstep::ui::reach::FOLDER_INDEX)
    );
    assert_eq!(
        m["offline"]["folderLessonsMax"].as_u64(),
        Some(lockstep::ui::reach::FOLDER_LESSONS_MAX as u64)
    );
}

/// The lesson preview reads, from the course's files, which members of the learner's saved
/// progress hold a run of their own: they are the members the app writes.
#[test]
fn the_previews_name_the_members_of_progress_that_hold_the_learners_own_run() {
    use lockstep::ui::course::LessonProgress;
    let mut p = LessonProgress::default();
    p.gate_edits.insert("step".into(), vec!["x".into()]);
    p.exercise_edits.insert("exercise".into(), vec!["x".into()]);
    let written = serde_json::to_value(&p).unwrap();
    for member in lockstep::ui::preview::OWN_RUN {
        assert!(
            written.get(member).is_some_and(Value::is_object),
            "{member} is not a member of a lesson's saved progress: {written}"
        );
    }
}
