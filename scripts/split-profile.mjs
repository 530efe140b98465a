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
// carrying its own scenario; for the lessons the list, every step
// and every exercise of every lesson, each on a first visit and on a return (with what the first
// saved in the browser). What ran until the view was ready and the page was
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
import { serveDir } from '../tests/e2e/lib/server.mjs';

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

const BUNDLES = {
  app: () => [
    '#/sandbox',
    ...fs.readdirSync(path.join(ROOT, 'lessons', 'scenarios')).filter((f) => f.endsWith('.toml')).sort().map((f) => `#/run?v=1&b=${f}`),
    customLink(),
  ],
  course: lessonAddresses,
};

async function profile(browser, baseURL, addresses) {
  const hits = new Set();
  for (const address of addresses) {
    const context = await browser.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // A first visit, then a return with what the first one saved (work, progress).
    for (const visit of [() => page.goto(`${baseURL}${address}`), () => page.reload()]) {
      await visit();
      await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 60000 });
      await page.waitForLoadState('networkidle');
      await page.waitForTimeout(500);
    }
    const seen = await page.evaluate(() => [...(globalThis.__lockstepSplit && globalThis.__lockstepSplit.hits || [])]);
    if (seen.length === 0) throw new Error(`${address}: no function reported its run (is the bundle instrumented?)`);
    if (errors.length) throw new Error(`${address}: ${errors.join('; ')}`);
    seen.forEach((f) => hits.add(f));
    await context.close();
  }
  return hits;
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-split-'));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
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
}

await main();
