#!/usr/bin/env node
// Records what the first view of each split bundle runs (src/bin/split.rs), in headless
// Chromium, and writes it to scripts/split/NAME.txt, the profile the site's build splits by.
//
//   node scripts/split-profile.mjs [--check]
//
// Needs a release build of the site (its hook leaves each split bundle with its function names
// in target/split/) and target/debug/lockstep and target/debug/lockstep-split. Each bundle is
// instrumented (every function reports its first run), served in place of the split one, and
// opened at every address a reader can land on: for the sandbox its own address, the link of
// every shipped scenario (each runs code of its own: partitions, pauses, migrations) and a link
// carrying its own scenario; for the embed the same, bare and with every control listed; for the lessons the list, every step
// and every exercise of every lesson, each on a first visit and on a return (with what the first
// saved in the browser), on a wide screen and on a phone's. What ran until the view was ready and the page was
// quiet is the profile. A function missing from it is only slower the first time it runs,
// so the profile needs recording again when the code changes much; scripts/bundles.mjs's
// budgets say when. With --check, nothing is written and the run fails if a view ran a
// function the profile lacks.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serveDir, serveHtml } from '../tests/e2e/lib/server.mjs';
import { manifest } from './site.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const SPLITTER = path.join(ROOT, 'target', 'debug', 'lockstep-split');
const CLI = path.join(ROOT, 'target', 'debug', 'lockstep');
const check = process.argv.includes('--check');

/** A link to the live run of a scenario that is not a shipped one (it carries its JSON). */
function customLink() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-profile-'));
  const file = path.join(dir, 'custom.toml');
  const text = fs.readFileSync(path.join(ROOT, 'lessons', 'scenarios', '06-partition.toml'), 'utf8');
  fs.writeFileSync(file, text.replace(/^name = ".*"$/m, 'name = "A scenario of my own"'));
  const md = execFileSync(CLI, ['export', file, '--format', 'md', '--link-base', 'http://x/'], { encoding: 'utf8' });
  fs.rmSync(dir, { recursive: true, force: true });
  const m = /#\/run\?[^)\s]*/.exec(md);
  if (!m || !m[0].includes('j=')) throw new Error(`no link with its own scenario in:\n${md}`);
  return m[0];
}

function lessonAddresses() {
  const index = JSON.parse(fs.readFileSync(path.join(DIST, 'course', 'index.json'), 'utf8'));
  const out = ['#/lessons'];
  for (const id of index.lessons) {
    const { lesson } = JSON.parse(fs.readFileSync(path.join(DIST, 'course', `${id}.json`), 'utf8'));
    out.push(`#/lessons/${id}`);
    for (const s of lesson.steps) out.push(`#/lessons/${id}/${s.id}`);
    for (const e of lesson.exercises || []) out.push(`#/lessons/${id}/${e.id}`);
  }
  return out;
}

/** The controls an embed of a shipped scenario can list: every one its edits name. */
function controlsOf(file) {
  const names = execFileSync(CLI, ['names', file], { encoding: 'utf8' });
  const edits = names.split('edits the controls can make')[1] || '';
  const controls = new Set();
  for (const line of edits.split('\n').slice(1)) {
    const words = line.trim().split(/\s+/);
    if (words.length < 2) continue;
    // `fencing orders …`, `protocol batch …`, `outage old …` name what they change; `pause on`,
    // `migration on`, `seed N` do not.
    controls.add(['fencing', 'protocol', 'outage'].includes(words[0]) ? `${words[0]} ${words[1]}` : words[0]);
  }
  return [...controls].join(',');
}

function shipped() {
  const dir = path.join(ROOT, 'lessons', 'scenarios');
  return fs.readdirSync(dir).filter((f) => f.endsWith('.toml')).sort().map((f) => [f, path.join(dir, f)]);
}

const BUNDLES = {
  app: () => [
    '#/sandbox',
    ...shipped().map(([f]) => `#/run?v=1&b=${f}`),
    customLink(),
  ],
  course: lessonAddresses,
  // An embed of every shipped scenario, bare and with every control it can list, and one
  // carrying its own scenario; and a few inside a host page that talks to them (below).
  embed: () => [
    ...shipped().flatMap(([f, file]) => [`#/embed?v=1&b=${f}`, `#/embed?v=1&b=${f}&controls=${encodeURIComponent(controlsOf(file))}`]),
    customLink().replace('#/run?', '#/embed?'),
    ...['01-two-services.toml', '05-fencing.toml'].map((f) => ({ hosted: `#/embed?v=1&b=${f}&id=first` })),
  ],
};

/**
 * A docs page with the embed in a frame, as the recipes write it (docs/embedding.md), served
 * on an origin of its own that the embed's address lists: the sizing script and the host
 * helper, which asks for the height, follows the page's theme and asks for the verdict.
 */
async function hostPage(baseURL, address) {
  let origin = '';
  const server = await serveHtml(() => `<!doctype html><html lang="en"><head><title>A docs page</title></head><body>
<h1>A chapter</h1>
<iframe class="lockstep-embed" src="${baseURL}${address}&origins=${encodeURIComponent(origin)}" title="A run"></iframe>
<script src="${baseURL}embed-size.js"></script>
<script src="${baseURL}lockstep-host.js"></script>
<script>
  Lockstep.followTheme(() => (document.documentElement.classList.contains('dark') ? 'dark' : 'light'));
  Lockstep.embeds().forEach((e) => e.request({ type: 'lockstep:get-verdict' }).catch(() => {}));
  setTimeout(() => document.documentElement.classList.add('dark'), 500);
</script></body></html>`);
  origin = server.origin;
  return server;
}

async function profile(browser, baseURL, addresses) {
  const hits = new Set();
  const one = async ([address, look]) => {
    const context = await browser.newContext({ serviceWorkers: 'block', ...look });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // An embed in a host page is profiled in its frame.
    const hosted = typeof address === 'object';
    const host = hosted ? await hostPage(baseURL, address.hosted) : null;
    const open = hosted ? () => page.goto(host.url) : () => page.goto(`${baseURL}${address}`);
    const view = () => (hosted ? page.frames().find((f) => f.url().startsWith(baseURL)) : page);
    // A first visit, then a return with what the first one saved (work, progress).
    for (const visit of [open, hosted ? open : () => page.reload()]) {
      await visit();
      const where = hosted ? await (async () => { for (let i = 0; i < 600 && !view(); i++) await page.waitForTimeout(100); return view(); })() : page;
      await where.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 60000 });
      // Work that follows the view (other lessons fetched, a value freed once a fetch is
      // done) counts too: the e2e test waits a second after the network is quiet.
      await page.waitForLoadState('networkidle');
      await page.waitForTimeout(2000);
      // A closure the page no longer holds is freed when the browser collects it, at a time of
      // its own choosing: collect now, so that what freeing runs is in the profile too.
      for (let i = 0; i < 2; i++) {
        await where.evaluate(() => globalThis.gc && globalThis.gc());
        await page.waitForTimeout(200);
      }
      // Each visit's own: a reload starts the page's state, and its report, anew.
      const seen = await where.evaluate(() => [...(globalThis.__lockstepSplit && globalThis.__lockstepSplit.hits || [])]);
      if (seen.length === 0) throw new Error(`${JSON.stringify(address)}: no function reported its run (is the bundle instrumented?)`);
      seen.forEach((f) => hits.add(f));
    }
    if (host) await host.close();
    if (errors.length) throw new Error(`${JSON.stringify(address)}: ${errors.join('; ')}`);
    await context.close();
  };
  // A few pages at a time: the waits, not the work, take most of the time.
  // Two readers: a wide light screen that asks for less motion, and a phone in the dark.
  // Each runs code of its own (what resizing draws again, what playback animates).
  const looks = [
    { viewport: { width: 1280, height: 900 }, colorScheme: 'light', reducedMotion: 'reduce' },
    { viewport: { width: 390, height: 844 }, colorScheme: 'dark', reducedMotion: 'no-preference' },
  ];
  const queue = addresses.flatMap((a) => looks.map((look) => [a, look]));
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (queue.length) await one(queue.shift());
  }));
  return hits;
}

async function main() {
  // The bundles the manifest splits are the ones recorded here, each with its addresses.
  const split = manifest().bundles.filter((b) => b.split).map((b) => b.name).sort().join(' ');
  if (Object.keys(BUNDLES).sort().join(' ') !== split) {
    throw new Error(`site.json splits ${split}; this script records ${Object.keys(BUNDLES).sort().join(' ')}: give each split bundle its addresses in BUNDLES`);
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-split-'));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--js-flags=--expose-gc'],
  });
  let missing = 0;
  try {
    for (const [name, addresses] of Object.entries(BUNDLES)) {
      const named = path.join(ROOT, 'target', 'split', `${name}_bg.wasm`);
      if (!fs.existsSync(named)) throw new Error(`${path.relative(ROOT, named)} is missing: build the site first`);
      // A copy of the site whose bundle is the whole module, instrumented.
      const site = path.join(work, name);
      fs.cpSync(DIST, site, { recursive: true });
      execFileSync(SPLITTER, ['instrument', named, path.join(site, `${name}_bg.wasm`)]);
      const server = await serveDir(site);
      try {
        const list = addresses();
        const hits = await profile(browser, server.url, list);
        const hitsFile = path.join(work, `${name}.hits`);
        fs.writeFileSync(hitsFile, [...hits].join('\n'));
        const names = execFileSync(SPLITTER, ['names', named, hitsFile], { encoding: 'utf8', maxBuffer: 64 << 20 });
        const out = path.join(ROOT, 'scripts', 'split', `${name}.txt`);
        const header = `# What the first views of the ${name} bundle run: ${list.length} addresses (scripts/split-profile.mjs).\n`;
        if (check) {
          const kept = new Set(fs.existsSync(out) ? fs.readFileSync(out, 'utf8').split('\n') : []);
          const lacking = names.split('\n').filter((n) => n && !kept.has(n));
          missing += lacking.length;
          console.log(`${name}: ${lacking.length} functions run by a first view are not in ${path.relative(ROOT, out)}${lacking.length ? `, e.g. ${lacking.slice(0, 3).join(', ')}` : ''}`);
        } else {
          fs.mkdirSync(path.dirname(out), { recursive: true });
          fs.writeFileSync(out, header + names);
          console.log(`${name}: ${names.split('\n').filter(Boolean).length} functions from ${list.length} addresses in ${path.relative(ROOT, out)}`);
        }
      } finally {
        await server.close();
      }
    }
  } finally {
    await browser.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
  if (check && missing) process.exitCode = 1;
  // The compiler the profiles hold for: a build with another says so (scripts/site-check.mjs).
  if (!check) fs.writeFileSync(path.join(ROOT, 'scripts', 'split', 'rustc.txt'), `${execFileSync('rustc', ['--version'], { cwd: ROOT, encoding: 'utf8' }).trim()}\n`);
}

await main();
