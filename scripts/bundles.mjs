// The check that each of the page's bundles carries what the site's manifest says.
//
// The page is several WebAssembly bundles, one per entry point in src/bin/, each linking only
// what its views reach (the page's router picks one by the address; the others load when
// asked). The manifest (site.json) says, for each view a reader lands on first: the bundle, the
// files fetched before the view is ready, its size budget (gzip -9 of those files), and the code
// its bundle must not link.
// `node scripts/bundles.mjs --check` (run by scripts/test.sh after the release build) reads the
// function names the compiler left in each bundle (target/site/wasm32-unknown-unknown/web/*.wasm,
// before wasm-opt strips them) and the sizes of dist/, and fails when a bundle links what it
// must not or a view passes its budget. Sizes are deterministic for a given toolchain: this is
// not a timed test. Without --check it prints the figures and exits 0.
//
// The budgets are today's figures with a little room, so that growth is caught; each view's
// `budgetWhy` says how it came to be. The sizes do not depend on the machine: the bundles carry no file paths
// (panics stop without a message; scripts/site-env.sh). The goal for every first view is
// 300 KB (see README.md, "Size").
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { bundle, manifest, ROOT } from './site.mjs';

const SITE = manifest();

/** The views a reader lands on first (site.json's `views`), each with what its bundle must not
 *  link or carry. */
export const VIEWS = SITE.views.map((v) => {
  const b = v.bundle ? bundle(SITE, v.bundle) : null;
  return { ...v, carries: v.carries || b.carries, mustNotLink: b ? b.mustNotLink : [], mustNotCarry: b ? b.mustNotCarry : [] };
});

/** Bundles loaded only when asked, printed for the record: the manifest's bundles no view
 *  lands on first. */
export const ON_DEMAND = SITE.bundles
  .filter((b) => !SITE.views.some((v) => v.bundle === b.name))
  .map((b) => [b.name, b.carries]);

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
const LESSON_FILE = (f) => f.endsWith('.json') && f !== 'index.json' && f !== 'previews.json';
/** A place's preview, LESSON.PLACE.html. */
const PREVIEW_FILE = (f) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.html$/.test(f);

/** gzip -9 sizes of a view's first-load files in `dist`. */
function firstLoad(dist, files) {
  const loader = fs.readdirSync(dist).find((f) => /^loader-[0-9a-f]+\.js$/.test(f));
  const named = { loader, lesson: largestOf(dist, LESSON_FILE), preview: largestOf(dist, PREVIEW_FILE) };
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
