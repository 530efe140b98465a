// What each of the page's bundles carries, in one place, and the check that keeps it so.
//
// The page is several WebAssembly bundles, one per entry point in src/bin/, each linking only
// what its views reach (index.html picks one by the address; the others load when asked). The
// table below says, for each view a reader lands on first: the bundle, the files fetched before
// the view is ready, its size budget (gzip -9 of those files), and the code it must not link.
// `node scripts/bundles.mjs --check` (run by scripts/test.sh after the release build) reads the
// function names the compiler left in each bundle (target/site/wasm32-unknown-unknown/web/*.wasm,
// before wasm-opt strips them) and the sizes of dist/, and fails when a bundle links what it
// must not or a view passes its budget. Sizes are deterministic for a given toolchain: this is
// not a timed test. Without --check it prints the figures and exits 0.
//
// The budgets are today's figures with a little room (an embed's is the goal itself), so that
// growth is caught. The sizes do not depend on the machine: the bundles carry no file paths
// (panics stop without a message; scripts/site-env.sh). The goal for every first view is
// 300 KB (see README.md, "Size").
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Code that only the studio's bundle or a worker may link. Drop glue (`drop_in_place`) does
 *  not count: a state that can hold a value links its destructor, not the code that makes it. */
const HEAVY = [
  'toml::de::', // the TOML reader: the editor's reader worker, the checker, the studio
  'toml_parser::',
  'pulldown_cmark::', // lesson files are parsed in the checker's worker
  'lockstep::lesson::parse::',
  'lockstep::explore::', // the explorer: the studio and the lab worker
  'lockstep::ui::lab::',
  'lockstep::web::lab::LabPanel',
  'lockstep::web::lab::ExplorePanel',
  'lockstep::web::share::SharePanel', // exports and the share panel: the studio
  'lockstep::ui::export::',
];

/** A line of a shipped scenario's TOML text, which only a bundle with an editor needs (the
 *  others read the scenarios' JSON form). */
const SHIPPED_TOML = 'name = "Two services, one lock"';

export const VIEWS = [
  {
    view: 'the sandbox, or a permalink (#/sandbox, #/run?…)',
    bundle: 'app',
    carries: 'the simulator, the verdict, the timeline, the sandbox with its controls and editor (read in a worker); its heavier panels folded. Split: app_bg.wasm is what the first view runs, app_rest.wasm the rest, fetched once the view is ready',
    firstLoad: ['index.html', 'loader', 'style.css', 'app.js', 'app_bg.wasm'],
    // 311 KB whole; 277 once split by what the first view runs (src/bin/split.rs); 290 with
    // the majority protocol and its marks on the timeline; 292.8 with the one loader (which
    // says whether the page keeps an offline copy) and the lane labels fitted in ui.
    budgetKB: 293,
    // A recording is imported only by the share panel, so its checks and its label are the
    // studio's alone. The browser inflates a permalink's scenario (web/packing.rs).
    mustNotLink: [...HEAVY, 'lockstep::lesson::claim::', 'lockstep::lesson::wire::', 'lockstep::ui::course::LessonRun::check', 'lockstep::web::course::LessonView', 'lockstep::web::embed::', 'plotters::', 'lockstep::recording::check_event', 'lockstep::web::panels::recorded_label', 'miniz_oxide::'],
  },
  {
    view: 'an embed (#/embed?…)',
    bundle: 'embed',
    carries: 'the simulator, the verdict, the timeline and the controls the address lists; no editor, panels or lessons. Split like the sandbox\'s (embed_bg.wasm, then embed_rest.wasm)',
    firstLoad: ['index.html', 'loader', 'style.css', 'embed.js', 'embed_bg.wasm'],
    // 281 KB whole; 246 once split by what the first view runs (src/bin/split.rs); 258 with
    // the majority protocol and its marks on the timeline; 260.3 with the host API finished
    // (every request answered by its id, set-theme, a height for a host that asks, an address
    // whose run cannot be shown refused before any run) and the loader telling the host when
    // a part of the bundle is missing. 267.8 once the profile was recorded inside a host page
    // that talks to the embed (the host API's code is in the first part: the embed no longer
    // stops to load the rest when a host speaks; the rest went from 54.7 to 49.0).
    budgetKB: 268,
    // The browser deflates and inflates a link's scenario for the embed (web/embed.rs).
    mustNotLink: [...HEAVY, 'lockstep::lesson::claim::', 'lockstep::lesson::wire::', 'lockstep::ui::course::LessonRun::check', 'lockstep::ui::course::LessonRun::follow_run', 'lockstep::web::course::', 'lockstep::web::controls::Editor', 'plotters::', 'miniz_oxide::'],
    mustNotCarry: [SHIPPED_TOML],
  },
  {
    // A lesson's step or exercise is first drawn from the course's files (static/lesson-preview.js):
    // its narration and a picture of its run, drawn by the engine when the files were written.
    // The course's bundle is asked for once that is on screen.
    view: 'a lesson\'s step or exercise, first drawn from the course\'s files (#/lessons/…)',
    bundle: null,
    carries: 'no bundle: the place\'s title, narration and goal from its lesson\'s file, and the picture of its run (course/LESSON.PLACE.run.svg); the simulator follows',
    // `lesson`: the largest of the lessons' files; `picture`: the largest picture of a place.
    firstLoad: ['index.html', 'loader', 'style.css', 'lesson-preview.js', 'course/index.json', 'lesson', 'picture'],
    // The heaviest lesson's file is the majority lesson's (13.5 KB, two recordings on real
    // Redis servers among its steps), where it was the regions lesson's (7.8 KB). 37.7 with the
    // one loader for every bundle (1.2 KB more of it).
    budgetKB: 38,
    mustNotLink: [],
  },
  {
    view: 'a lesson\'s place, live: after its preview, or at once (from the offline copy, the learner\'s own run, a lesson from a folder or opened) (#/lessons/…)',
    bundle: 'course',
    carries: 'split like the sandbox\'s (course_bg.wasm, then course_rest.wasm): the simulator, the verdict, the timeline, the lessons (a step fetches its own lesson, course/ID.json, and the others follow once it shows), predictions, gates, exercises and their codes, a step\'s sweep as its numbers and the course\'s picture of its plot, recordings from real services shown in a step, lessons opened by link or from the folder beside the site',
    // `lesson`: the largest of the lessons' files, the one step of the heaviest lesson fetches.
    // lesson-preview.js is fetched first, and finds no preview to draw.
    firstLoad: ['index.html', 'loader', 'style.css', 'lesson-preview.js', 'course.js', 'course_bg.wasm', 'course/index.json', 'lesson'],
    // The lessons' own readers are written by hand (src/json.rs) and a step fetches only its
    // own lesson: 572 KB before, 503 after; 446 once the standard library was built for size;
    // 416 once a step's sweep plot became a picture and progress was read by hand; 391 once
    // small maps and sets were sorted vectors (src/sorted.rs), 389 once a lesson was read by
    // moving its texts and the view wrote no scenario text; 348 once split by what the first
    // views of every step run (src/bin/split.rs; course_rest.wasm follows once the view is
    // ready). A single step's own profile would give 313: function by function, no split
    // reaches 300 here, hence the preview above. 384 once the heaviest lesson's file was the
    // majority lesson's, with its two recordings on real Redis servers (13.5 KB, where the
    // heaviest was 7.8). 387.0 with the one loader, the lane labels fitted in ui and "Show
    // what happens".
    budgetKB: 388,
    // A step's plot is a file of the course, or is drawn by the `plot` bundle.
    // The lesson view writes no scenario text: "Open in sandbox" hands over the run.
    mustNotLink: [...HEAVY, 'lockstep::web::embed::', 'lockstep::web::Sandbox', 'lockstep::web::course::FacilitatorView', 'lockstep::web::controls::Editor', 'plotters::', 'lockstep::plot::', 'lockstep::scenario::canonical::'],
    mustNotCarry: [SHIPPED_TOML],
  },
];

/** Bundles loaded only when asked, printed for the record. */
export const ON_DEMAND = [
  ['studio', "the whole app: the sandbox's lab, explorer and exports, the facilitator's view, TOML links"],
  ['checker', 'a lesson file opened: the Markdown parser and the checker (worker)'],
  ['reader', "the sandbox's first edit: the TOML reader (worker)"],
  ['lab', 'a sweep or an exploration (worker)'],
  ['plot', "a sweep's plot in a step of a lesson read in the page (the shipped lessons' plots are files)"],
];

/** Reads a LEB128 unsigned number at `at`; returns [value, next]. */
function leb(buf, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = buf[at++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, at];
  }
}

/** The function names of a wasm file's name section, demangled well enough to match paths. */
export function functionNames(file) {
  const buf = fs.readFileSync(file);
  let at = 8;
  while (at < buf.length) {
    const id = buf[at];
    const [size, body] = leb(buf, at + 1);
    const end = body + size;
    if (id === 0) {
      const [len, nameAt] = leb(buf, body);
      if (buf.toString('utf8', nameAt, nameAt + len) === 'name') {
        let sub = nameAt + len;
        while (sub < end) {
          const kind = buf[sub];
          const [subSize, subBody] = leb(buf, sub + 1);
          if (kind === 1) {
            const names = [];
            let [count, p] = leb(buf, subBody);
            while (count-- > 0) {
              let n;
              [, p] = leb(buf, p);
              [n, p] = leb(buf, p);
              names.push(demangle(buf.toString('utf8', p, p + n)));
              p += n;
            }
            return names;
          }
          sub = subBody + subSize;
        }
      }
    }
    at = end;
  }
  return [];
}

/** Rust's legacy mangling (`_ZN…E`) as a path: `lockstep::web::lab::LabPanel`. */
function demangle(name) {
  const m = /^_ZN(.*)E$/.exec(name);
  if (!m) return name;
  const parts = [];
  let s = m[1];
  while (s.length) {
    const d = /^(\d+)/.exec(s);
    if (!d) break;
    const n = Number(d[1]);
    const part = s.slice(d[1].length, d[1].length + n);
    s = s.slice(d[1].length + n);
    if (/^h[0-9a-f]{16}$/.test(part)) continue;
    parts.push(part);
  }
  return parts
    .join('::')
    .replaceAll('$LT$', '<')
    .replaceAll('$GT$', '>')
    .replaceAll('$RF$', '&')
    .replaceAll('$BP$', '*')
    .replaceAll('$C$', ',')
    .replaceAll('$u20$', ' ')
    .replaceAll('$u7b$', '{')
    .replaceAll('$u7d$', '}')
    .replaceAll('..', '::');
}

/** The largest file of `dist/course` whose name passes `test` (gzip -9), by its path in `dist`. */
function largestOf(dist, test) {
  const dir = path.join(dist, 'course');
  if (!fs.existsSync(dir)) return undefined;
  const size = (f) => zlib.gzipSync(fs.readFileSync(path.join(dir, f)), { level: 9 }).length;
  const files = fs.readdirSync(dir).filter(test);
  files.sort((a, b) => size(b) - size(a));
  return files.length ? `course/${files[0]}` : undefined;
}

/** A lesson's file (not the index). */
const LESSON_FILE = (f) => f.endsWith('.json') && f !== 'index.json';
/** A place's picture, LESSON.PLACE.run.svg (not a step's sweep plot, LESSON.STEP.svg). */
const PICTURE_FILE = (f) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.run\.svg$/.test(f);

/** gzip -9 sizes of a view's first-load files in `dist`. */
function firstLoad(dist, files) {
  const loader = fs.readdirSync(dist).find((f) => /^loader-[0-9a-f]+\.js$/.test(f));
  const named = { loader, lesson: largestOf(dist, LESSON_FILE), picture: largestOf(dist, PICTURE_FILE) };
  let gz = 0;
  const parts = [];
  const missing = [];
  const listed = files.map((f) => (f in named ? named[f] : f));
  // The modules a bundle's script imports (wasm-bindgen's snippets, written beside it) are
  // fetched before it runs, so they count too.
  const imported = listed
    .filter((f) => f && f.endsWith('.js') && fs.existsSync(path.join(dist, f)))
    .flatMap((f) => fs.readFileSync(path.join(dist, f), 'utf8').match(/snippets\/[\w.-]+\/[\w.-]+\.js/g) || []);
  for (const f of [...listed, ...new Set(imported)]) {
    const file = f && path.join(dist, f);
    if (!file || !fs.existsSync(file)) {
      missing.push(f || 'loader-*.js');
      continue;
    }
    const z = zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length;
    gz += z;
    parts.push(`${f} ${(z / 1024).toFixed(1)}`);
  }
  return { kb: gz / 1024, parts, missing };
}

let all = null;
/** Every function name of every bundle, for checking that each pattern names real code. */
function everywhere() {
  if (!all) {
    const dir = path.join(ROOT, 'target', 'site', 'wasm32-unknown-unknown', 'web');
    all = [...VIEWS.map((v) => v.bundle).filter(Boolean), ...ON_DEMAND.map(([b]) => b)]
      .map((b) => path.join(dir, `${b}.wasm`))
      .filter((f) => fs.existsSync(f))
      .flatMap(functionNames);
  }
  return all;
}

function main() {
  const check = process.argv.includes('--check');
  const dist = path.join(ROOT, 'dist');
  const wasmDir = path.join(ROOT, 'target', 'site', 'wasm32-unknown-unknown', 'web');
  const problems = [];
  console.log('First views: gzip -9 of every file fetched before the view is ready (KB)');
  for (const v of VIEWS) {
    const size = firstLoad(dist, v.firstLoad);
    if (size.missing.length) problems.push(`${v.bundle}: ${size.missing.join(', ')} missing in dist/ (build the site first)`);
    const over = size.kb > v.budgetKB;
    if (over) problems.push(`${v.view}: ${size.kb.toFixed(1)} KB is over its budget of ${v.budgetKB} KB`);
    console.log(`  ${v.view}: ${size.kb.toFixed(1)} KB (budget ${v.budgetKB}; goal 300)${over ? '  OVER' : ''}\n    ${size.parts.join(' + ')}`);
    if (!v.bundle) continue;
    const wasm = path.join(wasmDir, `${v.bundle}.wasm`);
    if (!fs.existsSync(wasm)) {
      problems.push(`${v.bundle}: ${path.relative(ROOT, wasm)} is missing (build the site first)`);
      continue;
    }
    const names = functionNames(wasm).filter((n) => !n.startsWith('core::ptr::drop_in_place'));
    if (names.length === 0) problems.push(`${v.bundle}: no function names in ${path.relative(ROOT, wasm)}`);
    // Text, not code: data the bundle carries though it never needs it.
    const bytes = fs.readFileSync(path.join(dist, `${v.bundle}_bg.wasm`));
    for (const text of v.mustNotCarry || []) {
      if (bytes.includes(Buffer.from(text))) problems.push(`${v.bundle} carries the text "${text}"`);
    }
    for (const forbidden of v.mustNotLink) {
      // A name that matches nothing anywhere would make this check one that cannot fail.
      if (!everywhere().some((n) => n.includes(forbidden))) problems.push(`${v.bundle}: "${forbidden}" names no code of any bundle`);
      const hits = names.filter((n) => n.includes(forbidden));
      if (hits.length) problems.push(`${v.bundle} links ${forbidden} (${hits.length} functions, e.g. ${hits[0].slice(0, 160)})`);
    }
  }
  console.log('Fetched once the view is ready: the rest of a split bundle (gzip -9, KB)');
  for (const v of VIEWS.filter((x) => x.bundle)) {
    const rest = path.join(dist, `${v.bundle}_rest.wasm`);
    const profile = path.join(ROOT, 'scripts', 'split', `${v.bundle}.txt`);
    if (fs.existsSync(rest)) {
      console.log(`  ${v.bundle}_rest.wasm: ${(zlib.gzipSync(fs.readFileSync(rest), { level: 9 }).length / 1024).toFixed(1)} KB`);
    } else if (fs.existsSync(profile)) {
      problems.push(`${v.bundle}: ${path.relative(ROOT, profile)} is there but dist/${v.bundle}_rest.wasm is not (was the site built with --release?)`);
    }
  }
  console.log('Loaded on demand (gzip -9 of the bundle, KB)');
  for (const [bundle, what] of ON_DEMAND) {
    const size = firstLoad(dist, [`${bundle}.js`, `${bundle}_bg.wasm`]);
    console.log(`  ${bundle}: ${size.kb.toFixed(1)} KB: ${what}`);
  }
  if (problems.length) {
    console.log(`\n${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
    if (check) process.exit(1);
  } else if (check) {
    console.log('Every bundle is within its budget and links nothing it must not.');
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
