// Trunk post-build hook. It moves the inline module script that Trunk writes into index.html (the
// one that loads the wasm) into a file of its own, so the page's Content Security Policy can
// forbid inline scripts altogether (script-src 'self'), and writes the offline copy's list of files
// into the service worker (below). Run by Trunk with TRUNK_STAGING_DIR set.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { manifest, keptOffline, routerCode } from './site.mjs';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) {
  console.error('csp-hook: TRUNK_STAGING_DIR is not set; run it from Trunk');
  process.exit(1);
}
const site = manifest();
const file = path.join(dir, 'index.html');
const html = fs.readFileSync(file, 'utf8');
const inline = /<script type=("module"|module)>([\s\S]*?)<\/script>/g;
// The page's router is made from the manifest (scripts/site.mjs) and written into the loader in
// place of the name SITE_ROUTER (a global name, which the page's minifier leaves as it is).
const ROUTER = /\bSITE_ROUTER\b/g;
const router = `(${routerCode(site)})`;
let count = 0;
const out = html.replace(inline, (_, _type, written) => {
  count += 1;
  if ((written.match(ROUTER) || []).length !== 1) {
    console.error('csp-hook: the loader in index.html must name SITE_ROUTER once, where the router goes');
    process.exit(1);
  }
  const body = written.replace(ROUTER, () => router);
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 16);
  const name = `loader-${hash}.js`;
  fs.writeFileSync(path.join(dir, name), body);
  return `<script type="module" src="./${name}"></script>`;
});
if (count !== 1) {
  console.error(`csp-hook: expected one inline module script in index.html, found ${count}`);
  process.exit(1);
}
fs.writeFileSync(file, out);

// The bundles a reader lands on are split in two (src/bin/split.rs): what their first view runs,
// fetched before it, and the rest, fetched once the view is up. What a first view runs is the
// profile that scripts/split-profile.mjs records in a browser and scripts/split/NAME.txt keeps;
// wasm-opt keeps these bundles' function names (-g in index.html) for the profile to name
// them, and the split writes both halves without them. A copy with names stays in
// target/split/ for the next profile. A bundle without a profile is written whole.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SPLIT = site.bundles.filter((b) => b.split).map((b) => b.name);
// The glue's comments are for its readers here, not for every page load.
const glue = fs
  .readFileSync(path.join(ROOT, 'scripts', 'split-glue.js'), 'utf8')
  .split('\n')
  .filter((line) => !/^\s*\/\//.test(line))
  .join('\n');
// A development build (`trunk serve`) is neither optimized nor named as the profile is: it is
// written whole.
const release = process.env.TRUNK_PROFILE === 'release';
let splitter;
for (const name of SPLIT) {
  const wasm = path.join(dir, `${name}_bg.wasm`);
  const js = path.join(dir, `${name}.js`);
  if (!fs.existsSync(wasm) || !fs.existsSync(js)) continue;
  if (!release) {
    fs.appendFileSync(js, glue.replaceAll('__SPLIT_SECONDARY__', '""'));
    continue;
  }
  if (!splitter) splitter = buildSplitter();
  const named = path.join(ROOT, 'target', 'split', `${name}_bg.wasm`);
  fs.mkdirSync(path.dirname(named), { recursive: true });
  fs.copyFileSync(wasm, named);
  const profile = path.join(ROOT, 'scripts', 'split', `${name}.txt`);
  let rest = '';
  if (fs.existsSync(profile)) {
    rest = `${name}_rest.wasm`;
    run(splitter, ['split', named, profile, wasm, path.join(dir, rest)]);
  } else {
    console.warn(`csp-hook: ${path.relative(ROOT, profile)} is missing: ${name}_bg.wasm is not split (node scripts/split-profile.mjs records it)`);
    run(splitter, ['strip', named, wasm]);
  }
  fs.appendFileSync(js, glue.replaceAll('__SPLIT_SECONDARY__', JSON.stringify(rest)));
}

// The lesson preview (static/lesson-preview.js) is fetched before a lesson's first view, so it
// is sent minified; its comments are for its readers here.
const preview = path.join(dir, 'lesson-preview.js');
if (fs.existsSync(preview)) {
  const { transformSync } = await import('esbuild');
  const { code } = transformSync(fs.readFileSync(preview, 'utf8'), { minify: true, format: 'esm', target: 'es2020' });
  fs.writeFileSync(preview, code);
}

/** Builds lockstep-split natively, outside the site's wasm settings (scripts/site-env.sh). */
function buildSplitter() {
  const env = { ...process.env };
  for (const k of ['CARGO_TARGET_DIR', 'CARGO_UNSTABLE_BUILD_STD', 'RUSTC_BOOTSTRAP', 'CARGO_BUILD_TARGET']) delete env[k];
  const targetDir = path.join(ROOT, 'target');
  const built = spawnSync('cargo', ['build', '--quiet', '--bin', 'lockstep-split', '--target-dir', targetDir], { cwd: ROOT, env, stdio: 'inherit' });
  if (built.status !== 0) {
    console.error('csp-hook: could not build lockstep-split');
    process.exit(1);
  }
  return path.join(targetDir, 'debug', 'lockstep-split');
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`csp-hook: ${path.basename(cmd)} ${args[0]} failed`);
    process.exit(1);
  }
}

// The offline copy: the service worker (static/sw.js) caches every file of the build when the
// page is first visited, so the whole site (the workers started on demand included) loads
// again with the network off. Its list of files and its version, a hash of every file's
// contents, are written into it here, so a new build installs a new copy and drops the old.
const sw = path.join(dir, 'sw.js');
if (!fs.existsSync(sw)) {
  console.error('csp-hook: sw.js is missing from the build (index.html copies static/sw.js)');
  process.exit(1);
}
const files = [];
const walk = (sub) => {
  for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
    const rel = sub ? `${sub}/${entry.name}` : entry.name;
    if (entry.isDirectory()) walk(rel);
    else if (rel !== 'sw.js') files.push(rel);
  }
};
// What the copy does not keep is the manifest's (site.json, `offline`): a place's preview stands
// in for it while its simulator comes over the network, and the copy has the simulator at hand,
// so a place opened offline is drawn live at once.
const offline = keptOffline(site);
walk('');
files.sort();
const version = crypto.createHash('sha256');
for (const f of files) version.update(f).update('\0').update(fs.readFileSync(path.join(dir, f)));
const template = fs.readFileSync(sw, 'utf8');
const filled = template
  .replace(/^const VERSION = .*;$/m, `const VERSION = '${version.digest('hex').slice(0, 16)}';`)
  .replace(/^const FILES = .*;$/m, `const FILES = ${JSON.stringify(files.filter(offline).map((f) => `./${f}`))};`)
  .replace(/^const FOLDER_INDEX = .*;$/m, `const FOLDER_INDEX = ${JSON.stringify(site.offline.folderIndex)};`)
  .replace(/^const FOLDER_LESSONS_MAX = .*;$/m, `const FOLDER_LESSONS_MAX = ${JSON.stringify(site.offline.folderLessonsMax)};`);
if ((template.match(/^const (VERSION|FILES|FOLDER_INDEX|FOLDER_LESSONS_MAX) = .*;$/gm) || []).length !== 4) {
  console.error('csp-hook: sw.js lacks one of its VERSION, FILES, FOLDER_INDEX and FOLDER_LESSONS_MAX lines to fill in');
  process.exit(1);
}
fs.writeFileSync(sw, filled);
