//! A facilitator's lessons reaching a room: lessons by link (`?open=`), the folder of lessons
//! served beside the site, `lockstep lesson pack`, the words for an offline page, and
//! `lockstep names` for lesson authors. The browser's side is tested end to end in
//! `tests/e2e/specs/workshop_room.mjs`; what the page decides is tested here.

use std::path::{Path, PathBuf};
use std::process::Command;

use lockstep::lesson::{self, wire};
use lockstep::ui::course::{
    check_lesson_file, CheckReply, Folder, Lessons, OpenStatus, OpenedFiles, Origin, Progress,
    Shelf, ShelfAction,
};
use lockstep::ui::reach::{self, Fetch};

/// The example lesson of docs/workshop.md.
fn drill() -> String {
    std::fs::read_to_string(root().join("docs/examples/ledger-drill.md")).expect("the example")
}

use crate::{lockstep_cli as lockstep, root, stderr, stdout};

#[test]
fn a_link_names_the_lesson_file_to_open() {
    let cases: &[(&str, Option<&str>)] = &[
        ("#/lessons?open=lessons/drill.md", Some("lessons/drill.md")),
        (
            "#/lessons/ledger-drill/one-order?open=https%3A%2F%2Fhost.example%2Fa.md",
            Some("https://host.example/a.md"),
        ),
        // A raw address, as a person types it, is read too.
        (
            "#/lessons?open=https://host.example/w/a.md",
            Some("https://host.example/w/a.md"),
        ),
        ("#/lessons?x=1&open=a.md", Some("a.md")),
        ("#/lessons", None),
        ("#/lessons?open=", None),
        ("#/lessons?open=%ZZ", None),
        // Only the lessons' addresses open files.
        ("#/sandbox?open=a.md", None),
        ("#/run?open=a.md", None),
    ];
    for (hash, expected) in cases {
        assert_eq!(
            reach::open_param(hash).as_deref(),
            *expected,
            "open_param({hash:?})"
        );
    }
    let long = format!("#/lessons?open={}", "a".repeat(reach::URL_CHARS_MAX + 1));
    assert_eq!(
        reach::open_param(&long),
        None,
        "an address too long to be one"
    );
}

#[test]
fn a_lesson_is_fetched_only_from_the_sites_own_origin_and_those_its_policy_allows() {
    let page = "http://127.0.0.1:8080";
    let shipped_policy = std::fs::read_to_string(root().join("index.html")).unwrap();
    let csp = shipped_policy
        .split("content=\"")
        .find(|s| s.starts_with("default-src"))
        .and_then(|s| s.split('"').next())
        .expect("index.html carries its policy");
    assert!(reach::may_fetch("http://127.0.0.1:8080/lessons/a.md", page, Some(csp)).is_ok());
    let refused = reach::may_fetch("https://evil.example/a.md", page, Some(csp)).unwrap_err();
    assert!(
        refused.contains("https://evil.example") && refused.contains("--allow-origin"),
        "the refusal names the origin and how to allow it: {refused}"
    );
    // The operator's list: an origin, a subdomain wildcard, a scheme.
    let allowing = csp.replace(
        "connect-src 'self'",
        "connect-src 'self' https://lessons.example.org https://*.corp.example",
    );
    for (url, ok) in [
        ("https://lessons.example.org/w/a.md", true),
        ("https://LESSONS.example.org:443/a.md", true),
        ("http://lessons.example.org/a.md", false),
        ("https://team.corp.example/a.md", true),
        ("https://corp.example/a.md", false),
        ("https://lessons.example.org.evil.example/a.md", false),
        ("ftp://lessons.example.org/a.md", false),
        ("javascript:alert(1)", false),
    ] {
        assert_eq!(
            reach::may_fetch(url, page, Some(&allowing)).is_ok(),
            ok,
            "may_fetch({url})"
        );
    }
    // No policy at all: only the page's own origin.
    assert!(reach::may_fetch("https://lessons.example.org/a.md", page, None).is_err());
    assert_eq!(
        reach::origin_of("http://user:pw@Host.example:80/x"),
        Some("http://host.example".to_string())
    );
}

#[test]
fn a_folder_index_lists_plain_file_names_and_no_more_than_it_may() {
    assert_eq!(
        reach::read_folder_index(r#"{"lessons": ["a.md", "ledger-drill.md"]}"#),
        Ok(vec!["a.md".to_string(), "ledger-drill.md".to_string()])
    );
    for bad in [
        r#"{"lessons": ["../secret.md"]}"#,
        r#"{"lessons": ["sub/a.md"]}"#,
        r#"{"lessons": ["a.html"]}"#,
        r#"{"lessons": [".hidden.md"]}"#,
        r#"{"lessons": "a.md"}"#,
        r#"{"lesson": ["a.md"]}"#,
        "not json",
    ] {
        assert!(reach::read_folder_index(bad).is_err(), "{bad} is refused");
    }
    let many: Vec<String> = (0..=reach::FOLDER_LESSONS_MAX)
        .map(|i| format!("\"l{i}.md\""))
        .collect();
    let err =
        reach::read_folder_index(&format!("{{\"lessons\": [{}]}}", many.join(","))).unwrap_err();
    assert!(err.contains("at most"), "{err}");
}

#[test]
fn failures_name_their_cause_and_blame_no_line_of_the_lesson() {
    let offline = reach::fetch_failure("lessons/a.md", &Fetch::Offline);
    assert!(offline.contains("offline"), "{offline}");
    let missing = reach::fetch_failure("lessons/a.md", &Fetch::Status(404));
    assert!(
        missing.contains("HTTP 404") && missing.contains("no file"),
        "{missing}"
    );
    let big = reach::fetch_failure("a.md", &Fetch::TooLarge(10_000_000));
    assert!(big.contains("10000000 bytes"), "{big}");
    let cors = reach::fetch_failure(
        "https://x.example/a.md",
        &Fetch::Refused("Failed to fetch".into()),
    );
    assert!(
        cors.contains("Access-Control-Allow-Origin") && cors.contains("network may be off"),
        "{cors}"
    );
    assert!(reach::checker_failure(false).contains("offline"));

    // The checker's worker not loading is reported as that, not as a problem at line 1.
    let shelf = Shelf::new(OpenedFiles::default(), Progress::default());
    let why = reach::checker_failure(false);
    let action =
        ShelfAction::from_reply(CheckReply::Unavailable { why: why.clone() }, "text", None);
    assert_eq!(
        shelf.reduce(action).open_status,
        OpenStatus::Unavailable(why)
    );
}

/// A lesson step's address fetches its own lesson's file first: the step shows with that one
/// lesson, a link to another lesson waits for the rest, and if the rest never comes the shown
/// lesson stays and the course says what is missing.
#[test]
fn a_lesson_step_shows_its_own_lesson_before_the_rest_of_the_course_arrives() {
    let files = wire::course_files(&lesson::builtin::lessons());
    let file = |name: &str| files.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let first = || Box::new(wire::read_lesson_file(&file("fencing.json")).unwrap());
    let lessons = |s: &Shelf| match &s.lessons {
        Lessons::Ready(c) => c.lessons.iter().map(|l| l.lesson.id.clone()).collect(),
        _ => Vec::new(),
    };
    let asked =
        Shelf::new(OpenedFiles::default(), Progress::default()).reduce(ShelfAction::Fetching);
    assert!(asked.waiting());
    let one = asked.reduce(ShelfAction::FetchedLesson(first()));
    assert_eq!(lessons(&one), ["fencing"]);
    assert!(one.waiting(), "a link to another lesson waits for the rest");
    assert!(!one.shipped_complete());

    let all = one.reduce(ShelfAction::Fetched(wire::read_course_files(&files)));
    assert_eq!(lessons(&all).len(), lesson::builtin::lessons().len());
    assert!(!all.waiting() && all.shipped_complete() && all.missing.is_none());
    // A lesson arriving late never takes the others away.
    assert_eq!(
        lessons(&all.reduce(ShelfAction::FetchedLesson(first()))),
        lessons(&all)
    );

    let cut = one.reduce(ShelfAction::Fetched(Err("the network may be off".into())));
    assert_eq!(lessons(&cut), ["fencing"], "the shown lesson stays");
    assert_eq!(cut.missing.as_deref(), Some("the network may be off"));
    assert!(!cut.waiting() && cut.shipped_complete());
    // With nothing shown yet, the course itself failed.
    let failed = asked.reduce(ShelfAction::Fetched(Err("the network may be off".into())));
    assert_eq!(
        failed.lessons,
        Lessons::Failed("the network may be off".into())
    );
}

/// The course as the page makes it, with the shipped lessons loaded.
fn ready_shelf(opened: OpenedFiles) -> Shelf {
    let shipped =
        wire::read_course_files(&wire::course_files(&lesson::builtin::lessons())).unwrap();
    Shelf::new(opened, Progress::default())
        .reduce(ShelfAction::Fetching)
        .reduce(ShelfAction::FolderLoading)
        .reduce(ShelfAction::Fetched(Ok(shipped)))
}

#[test]
fn a_lesson_by_link_is_kept_with_its_address_and_opens_again_offline() {
    let url = "http://127.0.0.1:8080/workshop/ledger-drill.md";
    let text = drill();
    let shelf = ready_shelf(OpenedFiles::default()).reduce(ShelfAction::FolderRead(vec![], vec![]));
    assert!(!shelf.waiting());
    // While the link's file is fetched and checked, a link to its lesson waits.
    let fetching = shelf.reduce(ShelfAction::FetchingFile(url.into()));
    assert!(fetching.waiting());
    let checking = fetching.reduce(ShelfAction::Checking);
    assert!(checking.waiting());
    let opened = checking.reduce(ShelfAction::from_reply(
        check_lesson_file(&text),
        &text,
        Some(url.into()),
    ));
    assert!(!opened.waiting());
    assert!(matches!(&opened.open_status, OpenStatus::Opened { id, .. } if id == "ledger-drill"));
    let Lessons::Ready(course) = &opened.lessons else {
        panic!("ready");
    };
    assert!(course.find("ledger-drill", Some("one-order")).is_some());
    let kept = opened
        .opened
        .from_source(url)
        .expect("kept with its address");
    assert_eq!(kept.text, text);

    // A reload with the network off: the page reads what the browser kept, and the link's
    // fetch failing finds the kept copy by its address.
    let stored = opened.opened.to_json();
    let offline = ready_shelf(OpenedFiles::read(Some(&stored)))
        .reduce(ShelfAction::FolderRead(vec![], vec![]))
        .reduce(ShelfAction::FetchingFile(url.into()))
        .reduce(ShelfAction::Kept(url.into()));
    assert!(matches!(&offline.open_status, OpenStatus::Opened { id, .. } if id == "ledger-drill"));
    let Lessons::Ready(course) = &offline.lessons else {
        panic!("ready");
    };
    assert!(course.find("ledger-drill", None).is_some());
}

#[test]
fn the_folder_beside_the_site_adds_its_lessons_and_reports_what_it_could_not_read() {
    let text = drill();
    let (loaded, _) = lockstep::ui::course::open_lesson_file(&text).unwrap();
    // A folder's lesson may also carry a changed version of a shipped lesson.
    let changed = lesson::builtin::ALL[0]
        .text
        .replace("title = \"", "title = \"Changed: ");
    let (changed, _) = lockstep::ui::course::open_lesson_file(&changed).unwrap();
    let shelf = ready_shelf(OpenedFiles::default());
    assert!(shelf.waiting(), "the folder is on its way");
    let read = shelf.reduce(ShelfAction::FolderRead(
        vec![loaded, changed.clone()],
        vec!["lessons/b.md: line 3: a problem".into()],
    ));
    assert!(!read.waiting());
    assert_eq!(
        read.folder,
        Folder::Read(vec!["lessons/b.md: line 3: a problem".into()])
    );
    let Lessons::Ready(course) = &read.lessons else {
        panic!("ready");
    };
    let drill = &course.lessons[course.index("ledger-drill").unwrap()];
    assert_eq!(drill.origin, Origin::Served);
    let first = &course.lessons[course.index(&changed.lesson.id).unwrap()];
    assert!(first.lesson.title.starts_with("Changed: "));
    assert_eq!(first.origin, Origin::Served);
    assert_eq!(
        course.lessons.len(),
        lesson::builtin::lessons().len() + 1,
        "the changed lesson replaced the shipped one"
    );
}

/// A stand-in for a built site with the files `lesson pack` needs, laid out as the build writes
/// it: the page with its real policy, its loader moved into a file of its own and its style
/// sheet linked. The end-to-end tests pack the real build and open it.
fn site(dir: &Path) -> PathBuf {
    let site = dir.join("site");
    std::fs::create_dir_all(site.join("snippets/x")).unwrap();
    let page = std::fs::read_to_string(root().join("index.html")).unwrap();
    let start = page.find("<script type=\"module\">").unwrap();
    let end = page[start..].find("</script>").unwrap() + start;
    let loader = &page[start + "<script type=\"module\">".len()..end];
    std::fs::write(site.join("loader-0123456789abcdef.js"), loader).unwrap();
    let page = format!(
        "{}<script type=\"module\" src=\"./loader-0123456789abcdef.js\"></script>{}",
        &page[..start],
        &page[end + "</script>".len()..]
    )
    .replace(
        "<link data-trunk rel=\"css\" href=\"static/style.css\" crossorigin=\"anonymous\">",
        "<link crossorigin href=./style.css rel=stylesheet>",
    );
    std::fs::write(site.join("index.html"), page).unwrap();
    for f in ["app.js", "course.js", "snippets/x/a.js"] {
        std::fs::write(site.join(f), "// code").unwrap();
    }
    std::fs::write(site.join("course_bg.wasm"), [0, 97, 115, 109, 1, 0, 0, 0]).unwrap();
    std::fs::copy(root().join("static/style.css"), site.join("style.css")).unwrap();
    std::fs::create_dir_all(site.join("course")).unwrap();
    // The course's files, which say which version built the site.
    for (name, text) in wire::course_files(&lesson::builtin::lessons()) {
        if name.ends_with(".json") {
            std::fs::write(site.join("course").join(name), text).unwrap();
        }
    }
    // A place's picture (the handout shows it) and its preview with their index (shown only
    // while a simulator comes over the network).
    std::fs::write(site.join("course/fencing.stall.run.svg"), "<svg/>").unwrap();
    std::fs::write(
        site.join("course/fencing.stall.html"),
        "<div id=preview></div>",
    )
    .unwrap();
    std::fs::write(site.join("course/previews.json"), "{}").unwrap();
    std::fs::copy(root().join("static/sw.js"), site.join("sw.js")).unwrap();
    site
}

/// The files a single file carries, read back from its data block as the page reads them.
fn carried(page: &str) -> std::collections::BTreeMap<String, Vec<u8>> {
    use base64::Engine as _;
    let open = "<script type=\"application/json\" id=\"lockstep-files\">";
    let start = page.find(open).expect("the data block") + open.len();
    let end = page[start..].find("</script>").unwrap() + start;
    let data: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&page[start..end]).expect("the data block is JSON");
    data.into_iter()
        .map(|(name, b64)| {
            let packed = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64");
            let bytes = miniz_oxide::inflate::decompress_to_vec(&packed).expect("deflate");
            (name, bytes)
        })
        .collect()
}

/// The texts of a page's inline scripts (those without `src` and not data).
fn inline_scripts(page: &str) -> Vec<&str> {
    page.split("<script")
        .skip(1)
        .filter_map(|s| {
            let (tag, rest) = s.split_once('>')?;
            let executes = !tag.contains("src=") && !tag.contains("application/json");
            executes.then(|| rest.split("</script>").next().unwrap_or_default())
        })
        .collect()
}

#[test]
fn lesson_pack_single_file_carries_the_site_and_the_lessons_and_fetches_nothing() {
    use base64::Engine as _;
    use sha2::Digest as _;
    let scratch = crate::Scratch::new("pack-single");
    let site = site(&scratch.0);
    let file = scratch.0.join("workshop.html");
    let o = lockstep(&[
        "lesson",
        "pack",
        "docs/examples/ledger-drill.md",
        "--site",
        site.to_str().unwrap(),
        "--single-file",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(
        said.contains("packed 1 lesson(s)") && said.contains("no network"),
        "{said}"
    );
    assert!(!scratch.0.join("workshop").exists(), "one file, no folder");
    let page = std::fs::read_to_string(&file).unwrap();

    // Every file of the site but the page, its loader and the service worker, byte for byte,
    // and the folder of lessons the page reads beside it.
    let files = carried(&page);
    for name in [
        "app.js",
        "course.js",
        "snippets/x/a.js",
        "course_bg.wasm",
        "course/index.json",
        "course/fencing.stall.run.svg",
        "style.css",
    ] {
        assert_eq!(
            files.get(name).map(Vec::as_slice),
            Some(std::fs::read(site.join(name)).unwrap().as_slice()),
            "{name} is carried as it is"
        );
    }
    for name in ["index.html", "sw.js", "loader-0123456789abcdef.js"] {
        assert!(
            !files.contains_key(name),
            "{name} is not carried: the page is it"
        );
    }
    for name in ["course/fencing.stall.html", "course/previews.json"] {
        assert!(
            !files.contains_key(name),
            "{name} is not carried: nothing waits for a simulator from a file"
        );
    }
    let index = String::from_utf8(files["lessons/index.json"].clone()).unwrap();
    assert_eq!(
        reach::read_folder_index(&index),
        Ok(vec!["ledger-drill.md".to_string()])
    );
    assert_eq!(files["lessons/ledger-drill.md"], drill().into_bytes());

    // The loader and the style sheet are inline, nothing is fetched from beside the file, and
    // the policy allows exactly the page's scripts, by their hashes, and no network.
    let loader = std::fs::read_to_string(site.join("loader-0123456789abcdef.js")).unwrap();
    let scripts = inline_scripts(&page);
    assert_eq!(scripts.len(), 2, "the carrier and the loader");
    assert_eq!(scripts[1], loader, "the site's loader, unchanged");
    assert!(
        !page.contains("src=\"./") && !page.contains("href=./"),
        "nothing beside it"
    );
    assert!(page.contains("<style>") && !page.contains("rel=stylesheet"));
    let csp = page
        .split("content=\"")
        .find(|s| s.starts_with("default-src"))
        .and_then(|s| s.split('"').next())
        .unwrap();
    assert!(csp.starts_with("default-src 'none';"), "{csp}");
    for script in &scripts {
        let hash = base64::engine::general_purpose::STANDARD
            .encode(sha2::Sha256::digest(script.as_bytes()));
        assert!(csp.contains(&format!("'sha256-{hash}'")), "{csp}");
    }
    assert!(
        reach::may_fetch("https://lessons.example.org/a.md", "null", Some(csp)).is_err(),
        "no origin to fetch lessons from"
    );

    // A second pack onto the same file is refused; so is an origin, which it could not use.
    let again = lockstep(&[
        "lesson",
        "pack",
        "docs/examples/ledger-drill.md",
        "--site",
        site.to_str().unwrap(),
        "--single-file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("exists"), "{}", stderr(&again));
    let origin = lockstep(&[
        "lesson",
        "pack",
        "docs/examples/ledger-drill.md",
        "--site",
        site.to_str().unwrap(),
        "--single-file",
        scratch.0.join("other.html").to_str().unwrap(),
        "--allow-origin",
        "https://lessons.example.org",
    ]);
    assert_eq!(origin.status.code(), Some(2));
    assert!(
        stderr(&origin).contains("--allow-origin"),
        "{}",
        stderr(&origin)
    );
    assert!(!scratch.0.join("other.html").exists());
}

#[test]
fn lesson_pack_writes_the_site_with_the_checked_lessons_beside_it() {
    let scratch = crate::Scratch::new("pack-ok");
    let site = site(&scratch.0);
    let out = scratch.0.join("room");
    let o = lockstep(&[
        "lesson",
        "pack",
        "docs/examples/ledger-drill.md",
        "--site",
        site.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--allow-origin",
        "https://lessons.example.org",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(said.contains("packed 1 lesson(s)"), "{said}");
    assert!(said.contains("#/lessons/ledger-drill"), "{said}");
    // The site, whole, with its nested files, less the places' previews: a site with a folder
    // of lessons shows none (their index stays, which says so to the page).
    assert!(out.join("snippets/x/a.js").is_file());
    assert!(out.join("course/fencing.stall.run.svg").is_file());
    assert!(out.join("course/previews.json").is_file());
    assert!(!out.join("course/fencing.stall.html").exists());
    assert_eq!(
        std::fs::read_to_string(out.join("lessons/ledger-drill.md")).unwrap(),
        drill()
    );
    let index = std::fs::read_to_string(out.join("lessons/index.json")).unwrap();
    assert_eq!(
        reach::read_folder_index(&index),
        Ok(vec!["ledger-drill.md".to_string()]),
        "the page reads the index the pack writes"
    );
    let links = std::fs::read_to_string(out.join("lessons/index.html")).unwrap();
    assert!(
        links.contains("href=\"../#/lessons/ledger-drill/one-order\""),
        "{links}"
    );
    assert!(links.contains("Get the ledger written"));
    // The allowed origin is in the page's policy, which the page reads, and the offline copy
    // has a new version because the page changed.
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let csp = page
        .split("content=\"")
        .find(|s| s.starts_with("default-src"))
        .and_then(|s| s.split('"').next())
        .unwrap();
    assert!(reach::may_fetch("https://lessons.example.org/a.md", "http://h", Some(csp)).is_ok());
    let sw = std::fs::read_to_string(out.join("sw.js")).unwrap();
    assert!(!sw.contains("const VERSION = 'unbuilt';"), "{sw}");
    assert!(sw.lines().any(|l| l.starts_with("const VERSION = '")));

    // A second pack into the same folder is refused: nothing is overwritten.
    let again = lockstep(&[
        "lesson",
        "pack",
        "docs/examples/ledger-drill.md",
        "--site",
        site.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("is not empty"),
        "{}",
        stderr(&again)
    );
}

/// A lesson that draws a warning still packs: the warning is printed as `lesson check`
/// prints it, and the lesson is written.
#[test]
fn lesson_pack_prints_a_lessons_warning_and_packs_it() {
    let scratch = crate::Scratch::new("pack-warned");
    let site = site(&scratch.0);
    let out = scratch.0.join("room");
    let o = lockstep(&[
        "lesson",
        "pack",
        "tests/fixtures/lessons/lucky-seeds.md",
        "--site",
        site.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let warned: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.contains(": warning: "))
        .map(str::to_string)
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].starts_with(
            "tests/fixtures/lessons/lucky-seeds.md:23: warning: exercise \"one-ledger\" accepts"
        ) && warned[0].contains("add seed 67 to its seeds"),
        "{}",
        warned[0]
    );
    assert!(stdout(&o).contains("packed 1 lesson(s)"), "{}", stdout(&o));
    assert!(out.join("lessons/lucky-seeds.md").is_file());
}

#[test]
fn lesson_pack_refuses_a_broken_lesson_or_a_folder_that_is_no_site_and_writes_nothing() {
    let scratch = crate::Scratch::new("pack-refused");
    let site = site(&scratch.0);
    let broken = scratch.0.join("broken.md");
    std::fs::write(
        &broken,
        drill().replace("exclusion holds\", ", "exclusion broken\", "),
    )
    .unwrap();
    let out = scratch.0.join("room");
    let o = lockstep(&[
        "lesson",
        "pack",
        broken.to_str().unwrap(),
        "--site",
        site.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("nothing was written") && err.contains("broken.md:"),
        "{err}"
    );
    assert!(!out.exists());

    let nowhere = scratch.0.join("empty");
    std::fs::create_dir_all(&nowhere).unwrap();
    let o = lockstep(&[
        "lesson",
        "pack",
        "docs/examples/ledger-drill.md",
        "--site",
        nowhere.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("trunk build --release"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());

    // A site built from another version: one whose lessons are in an older format, and one
    // whose shipped lesson differs. The pack would put the facilitator's lessons in front of
    // another checker than the one that passed them.
    let index = site.join("course/index.json");
    let current = std::fs::read_to_string(&index).unwrap();
    let older = current.replace(
        &format!("\"version\":{}", wire::VERSION),
        &format!("\"version\":{}", wire::VERSION - 1),
    );
    assert_ne!(older, current);
    let fencing = site.join("course/fencing.json");
    let lesson = std::fs::read_to_string(&fencing).unwrap();
    for (file, text, says) in [
        (&index, older, format!("format {}", wire::VERSION - 1)),
        (
            &fencing,
            lesson.replacen("fenc", "fent", 1),
            "course/fencing.json is not this version's".to_string(),
        ),
    ] {
        let kept = std::fs::read_to_string(file).unwrap();
        std::fs::write(file, text).unwrap();
        let o = lockstep(&[
            "lesson",
            "pack",
            "docs/examples/ledger-drill.md",
            "--site",
            site.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        std::fs::write(file, kept).unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("built from another version") && err.contains(&says),
            "{says:?} in {err}"
        );
        assert!(!out.exists());
    }

    let o = lockstep(&[
        "lesson",
        "pack",
        "docs/examples/ledger-drill.md",
        "--out",
        out.to_str().unwrap(),
        "--allow-origin",
        "https://host.example/path",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not an origin"), "{}", stderr(&o));
}

#[test]
fn names_lists_what_a_lesson_may_name_and_every_edit_it_prints_applies() {
    let o = lockstep(&["names", "lessons/scenarios/02-both-unordered.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for expected in [
        "regions: east, west",
        "  east-locks (replicas in east)",
        "  east-app: east-app-1",
        "resources: ledger",
        "protocol east-app single:east-locks",
    ] {
        assert!(text.contains(expected), "{expected:?} in\n{text}");
    }
    let o = lockstep(&[
        "names",
        "lessons/scenarios/02-both-unordered.toml",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let scenario = lockstep::Scenario::from_toml_str(
        &std::fs::read_to_string(root().join("lessons/scenarios/02-both-unordered.toml")).unwrap(),
    )
    .unwrap();
    let edits = doc["edits"].as_array().expect("edits");
    assert!(edits.len() >= 10, "{doc}");
    for e in edits {
        let line = e["edit"].as_str().unwrap();
        let edit: lockstep::lesson::Edit =
            line.parse().unwrap_or_else(|err| panic!("{line}: {err}"));
        let applied = lockstep::ui::toggles::Settings::of([&edit]).apply(&scenario);
        assert!(applied.validate().is_ok(), "{line} gives a valid scenario");
        assert_ne!(applied, scenario, "{line} changes the scenario");
    }
}

/// The `sh` blocks of a Markdown page, in order.
fn sh_blocks(page: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in page.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap_or_default()),
            (Some(block), l) => {
                block.push_str(l);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// docs/workshop.md's commands, run as written in one shell from a folder laid out as the
/// project's root is (the shipped lessons and docs, and a built site in `dist`). The room's
/// codes are what a participant who solved the drill would send, saved as the guide says.
#[test]
fn the_guide_runs_as_written() {
    let page = std::fs::read_to_string(root().join("docs/workshop.md")).unwrap();
    let blocks = sh_blocks(&page);
    assert!(blocks.len() >= 4, "the guide has its commands: {blocks:?}");
    // The checkout (its docs, lessons and built site) in one folder, `$LOCKSTEP`; the
    // facilitator works in another, outside it, as the guide lets them.
    let scratch = crate::Scratch::new("pack-guide");
    let checkout = scratch.0.join("checkout");
    let home = scratch.0.join("home");
    std::fs::create_dir_all(&checkout).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    for dir in ["docs", "lessons"] {
        std::os::unix::fs::symlink(root().join(dir), checkout.join(dir)).unwrap();
    }
    let site = site(&scratch.0);
    std::fs::rename(&site, checkout.join("dist")).unwrap();

    let lesson = lesson::parse(&drill()).unwrap();
    let exercise = &lesson.exercises[0];
    let solution = exercise.solution.clone();
    let code = exercise.completion_code("Ada Lovelace", &lesson.id, &solution);
    let wrapped = format!("Ada Lovelace: {}\n{}", &code[..20], &code[20..]);

    let mut script = String::from("set -e\n");
    for block in &blocks {
        if block.contains("lesson verify") {
            script.push_str(&format!("printf '%s\\n' '{wrapped}' > codes.txt\n"));
        }
        if block.contains("lockstep room ") {
            // The room serves until it is stopped: started on a free loopback port, it is
            // stopped as Ctrl-C would once it has printed its links.
            script.push_str(&block.replace(
                "lockstep room workshop-site",
                "lockstep room workshop-site --port 0 --bind 127.0.0.1 > room.txt 2>&1 &\n\
                 room=$!\n\
                 for i in $(seq 200); do grep -q facilitator room.txt && break; sleep 0.05; done\n\
                 kill -TERM $room; wait $room; cat room.txt",
            ));
            continue;
        }
        script.push_str(block);
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_lockstep"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(&home)
        .env("PATH", path)
        .env("LOCKSTEP", &checkout)
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(
        !script.contains("../"),
        "the guide names the checkout as $LOCKSTEP, not by where the lesson's folder sits:\n{script}"
    );
    assert!(
        o.status.success(),
        "the guide's commands:\n{script}\n{out}\n{}",
        stderr(&o)
    );
    for expected in [
        "east-app: east-app-1",
        "ledger-drill.md: ok: lesson \"ledger-drill\"",
        "packed 1 lesson(s)",
        "wrote the handout of 1 lesson(s)",
        "Ada Lovelace",
        "verified",
        "give out: http://127.0.0.1:",
        "/room/?key=",
        "room: stopped",
    ] {
        assert!(out.contains(expected), "{expected:?} in\n{out}");
    }
    let packed = home.join("my-workshop/workshop-site/lessons/ledger-drill.md");
    assert!(packed.is_file(), "the pack is where the guide says");
    let handout = home.join("my-workshop/handout/handout.html");
    let page = std::fs::read_to_string(&handout).expect("the handout is where the guide says");
    assert!(
        page.contains("http://192.168.1.20:8000/#/lessons/ledger-drill/one-order"),
        "the handout links to the room"
    );
    assert!(
        home.join("my-workshop/workshop-site.room.sqlite").is_file(),
        "the room's store is beside the pack"
    );
}

/// docs/lessons.md shows `lockstep names` with its output; it is the real one.
#[test]
fn the_names_example_of_the_lesson_format_is_the_real_output() {
    let page = std::fs::read_to_string(root().join("docs/lessons.md")).unwrap();
    let start = page
        .find("$ lockstep names ")
        .expect("docs/lessons.md shows lockstep names");
    let block = &page[start..];
    let block = &block[..block.find("```").unwrap()];
    let (command, shown) = block.split_once('\n').unwrap();
    let args: Vec<&str> = command
        .trim_start_matches("$ lockstep ")
        .split(' ')
        .collect();
    let o = lockstep(&args);
    assert!(o.status.success());
    assert_eq!(shown, stdout(&o), "docs/lessons.md's names example");
}
