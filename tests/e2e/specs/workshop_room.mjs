// A facilitator's lesson reaching a room, as the room meets it: a lesson opened by its link in a
// fresh browser, a link to a lesson this browser has not loaded, a link to another site's file,
// a pack written by `lockstep lesson pack` and served by Python's plain static server, and the
// same pack reloaded with the network off after one visit. The lesson is the example of
// docs/workshop.md, as written there.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { ROOT, LOCKSTEP } from '../lib/cli.mjs';

const DRILL = path.join(ROOT, 'docs', 'examples', 'ledger-drill.md');
const DIST = process.env.E2E_DIST || path.join(ROOT, 'dist');

/** Serves a folder with `python3 -m http.server`, the plainest static host there is. */
async function pythonServer(dir) {
  const child = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`python3 http.server did not start: ${seen}`)), 10000);
    child.stdout.on('data', (d) => {
      seen += d;
      const m = /port (\d+)/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on('exit', (code) => reject(new Error(`python3 http.server exited (${code}): ${seen}`)));
  });
  return { url: `http://127.0.0.1:${port}/`, close: () => child.kill() };
}

/** A fresh folder under the system's temporary directory, removed by `done`. */
function scratch(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lockstep-${name}-`));
  return { dir, done: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** The built site with the drill beside it at `workshop/ledger-drill.md`, not in any index. */
function siteWithLooseFile() {
  const s = scratch('link');
  const site = path.join(s.dir, 'site');
  fs.cpSync(DIST, site, { recursive: true });
  fs.mkdirSync(path.join(site, 'workshop'));
  fs.copyFileSync(DRILL, path.join(site, 'workshop', 'ledger-drill.md'));
  return { site, done: s.done };
}

/** `lockstep lesson pack`, exactly as docs/workshop.md runs it, into a new folder. */
function pack() {
  const s = scratch('pack');
  const out = path.join(s.dir, 'room');
  const said = execFileSync(LOCKSTEP, ['lesson', 'pack', DRILL, '--site', DIST, '--out', out], { cwd: ROOT }).toString();
  assert(said.includes('packed 1 lesson(s)'), `lesson pack says what it packed: ${said}`);
  return { out, done: s.done };
}

/** `lockstep lesson pack --single-file`, as docs/workshop.md runs it, into a new folder. */
function packSingleFile() {
  const s = scratch('single');
  const file = path.join(s.dir, 'workshop.html');
  const said = execFileSync(LOCKSTEP, ['lesson', 'pack', DRILL, '--site', DIST, '--single-file', file], { cwd: ROOT }).toString();
  assert(said.includes('packed 1 lesson(s)') && said.includes('no network'), `lesson pack says what it wrote: ${said}`);
  return { file, done: s.done };
}

/** Solves the drill's exercise through its controls and returns the completion code. */
async function solveDrill(page) {
  await page.waitForSelector('#view-title[data-place="one-order"]', { timeout: 30000 });
  await page.selectOption('#protocol-east-app', 'single:east-locks');
  await page.selectOption('#protocol-west-app', 'single:east-locks');
  await until(async () => (await page.textContent('#verdict-headline')).startsWith('Exclusion holds'), 'the run to hold');
  await page.click('#check');
  await page.waitForSelector('#success', { timeout: 30000 });
  return page.inputValue('#completion-code');
}

/** Verifies `code` in the facilitator's view open in `page`; returns the roster's counts. */
async function verifyCode(page, code) {
  await page.waitForSelector('#codes', { timeout: 30000 });
  await page.waitForSelector('[data-exercise="one-order"]', { timeout: 30000 });
  await page.fill('#codes', `Ada: ${code}`);
  await page.click('#verify-codes');
  await page.waitForSelector('#roster tr.verified', { timeout: 20000 });
  return page.textContent('#roster-counts');
}

/** Opens `hash` on another server's site in this test's page and waits until it is ready. */
async function openOn(ctx, base, hash) {
  await ctx.page.goto(base + hash, { waitUntil: 'load' });
  await ctx.waitReady();
}

async function waitPlace(ctx, place) {
  await ctx.page.waitForSelector(`#view-title[data-place="${place}"]`, { timeout: 30000 });
}

export const tests = [
  {
    name: 'workshop_room::a_lesson_opens_by_its_link_in_a_fresh_browser',
    async run(ctx) {
      const { site, done } = siteWithLooseFile();
      const server = await pythonServer(site);
      try {
        // The printed link to the exercise carries the file's address.
        await openOn(ctx, server.url, '#/lessons/ledger-drill/one-order?open=workshop/ledger-drill.md');
        await waitPlace(ctx, 'one-order');
        assert((await ctx.text('#view-title')).includes('Get the ledger written'), 'the exercise of the linked file');
        // The link to the course opens the lesson and goes on to it.
        await openOn(ctx, server.url, '#/lessons?open=workshop/ledger-drill.md');
        await waitPlace(ctx, 'the-standoff');
        assertEqual(new URL(ctx.page.url()).hash, '#/lessons/ledger-drill', 'the link became the lesson\'s');
        // Kept in this browser: the lesson's own link works without ?open= now.
        await openOn(ctx, server.url, '#/lessons/ledger-drill/one-order');
        await waitPlace(ctx, 'one-order');
      } finally {
        server.close();
        done();
      }
    },
  },
  {
    name: 'workshop_room::a_link_to_a_lesson_not_loaded_says_how_to_load_it',
    async run(ctx) {
      await ctx.open('#/lessons/ledger-drill/one-order');
      await ctx.page.waitForSelector('#not-loaded', { timeout: 20000 });
      assertEqual(await ctx.text('#view-title'), 'This lesson is not loaded here', 'not "Nothing here"');
      const words = await ctx.text('#not-loaded');
      assert(words.includes('?open=') && words.includes('Open a lesson file'), `how to load it: ${words}`);
      // A file on another origin is refused with the origin and the operator's way to allow it.
      const other = await pythonServer(path.dirname(DRILL));
      try {
        await ctx.open(`#/lessons/ledger-drill?open=${encodeURIComponent(other.url + 'ledger-drill.md')}`);
        await ctx.page.waitForSelector('#not-loaded-why', { timeout: 20000 });
        const why = await ctx.text('#not-loaded-why');
        assert(why.includes(new URL(other.url).origin) && why.includes('--allow-origin'), `the refusal: ${why}`);
      } finally {
        other.close();
      }
    },
  },
  {
    name: 'workshop_room::a_pack_served_by_a_plain_static_server_carries_its_lessons',
    async run(ctx) {
      const { out, done } = pack();
      const server = await pythonServer(out);
      try {
        await openOn(ctx, server.url, '#/lessons');
        await ctx.page.waitForSelector('li[data-lesson="ledger-drill"]', { timeout: 30000 });
        assert((await ctx.text('li[data-lesson="ledger-drill"]')).includes("this site's"), 'marked as the site\'s');
        assert(await ctx.exists('li[data-lesson="fencing"]'), 'the shipped lessons too');
        // The printable page of links leads into the site.
        await ctx.page.goto(server.url + 'lessons/index.html', { waitUntil: 'load' });
        await ctx.page.click('a[href="../#/lessons/ledger-drill/one-order"]');
        await ctx.waitReady();
        await waitPlace(ctx, 'one-order');
        // Solved through the controls, the code verifies in the facilitator's view of a fresh
        // browser, once the pack's lessons are there.
        const code = await solveDrill(ctx.page);
        const fresh = await ctx.context.browser().newContext();
        try {
          const page = await fresh.newPage();
          await page.goto(server.url + '#/facilitator', { waitUntil: 'load' });
          // The folder's lessons are checked in this browser before codes for them can be.
          const counts = await verifyCode(page, code);
          assert(counts.includes('ledger-drill / one-order: 1 verified'), `the roster counts it: ${counts}`);
        } finally {
          await fresh.close();
        }
      } finally {
        server.close();
        done();
      }
    },
  },
  {
    name: 'workshop_room::after_one_visit_the_site_reloads_with_the_network_off',
    async run(ctx) {
      const { out, done } = pack();
      const server = await pythonServer(out);
      try {
        await openOn(ctx, server.url, '#/lessons');
        await ctx.page.waitForSelector('li[data-lesson="ledger-drill"]', { timeout: 30000 });
        // The offline copy is complete once its worker is active; then the server goes away
        // and the browser is told it is offline, as when a room's Wi-Fi drops.
        await ctx.page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
        await until(
          () => ctx.page.evaluate(async () => (await caches.keys()).some((k) => k.startsWith('lockstep-'))),
          'the offline copy to be cached',
          30000,
        );
        server.close();
        await ctx.context.setOffline(true);
        await ctx.reload();
        await ctx.page.waitForSelector('li[data-lesson="ledger-drill"]', { timeout: 30000 });
        await ctx.page.waitForSelector('li[data-lesson="fencing"]');
        // A lesson step: the course's bundle and the timeline, from the copy.
        await openOn(ctx, server.url, '#/lessons/fencing');
        await ctx.page.waitForSelector('#view-title[data-place]', { timeout: 30000 });
        await ctx.page.waitForSelector('#timeline');
        // The pack's lesson, checked by the checker's worker, from the copy too.
        await openOn(ctx, server.url, '#/lessons/ledger-drill/one-order');
        await waitPlace(ctx, 'one-order');
        // A lesson file never fetched here: the error names the network, not the lesson.
        await openOn(ctx, server.url, '#/lessons?open=elsewhere/new.md');
        await ctx.page.waitForSelector('#link-status .errors', { timeout: 20000 });
        const why = await ctx.text('#link-status');
        assert(why.includes('network may be off'), `the cause is named: ${why}`);
        assert(!/line 1/.test(why), `no line of a lesson is blamed: ${why}`);
        // The browser reports the failed request itself; it is the one this step asked for.
        ctx.errors = ctx.errors.filter((e) => !e.includes('/elsewhere/new.md'));
      } finally {
        await ctx.context.setOffline(false);
        server.close();
        done();
      }
    },
  },
  {
    // A room with no network at all: the facilitator hands out one file, opened from disk.
    name: 'workshop_room::the_single_file_runs_from_file_with_the_network_off',
    async run(ctx) {
      const { file, done } = packSingleFile();
      const url = pathToFileURL(file).href;
      try {
        await ctx.context.setOffline(true);
        await ctx.page.goto(`${url}#/lessons`, { waitUntil: 'load' });
        await ctx.waitReady();
        await ctx.page.waitForSelector('li[data-lesson="ledger-drill"]', { timeout: 30000 });
        assert(await ctx.exists('li[data-lesson="fencing"]'), 'the shipped lessons too');
        await ctx.page.waitForSelector('#offline-status.ready');
        assert((await ctx.text('#offline-status')).startsWith('Ready to work offline'), 'the page says it works offline');
        // A step plays: the simulator runs the shipped lesson's first step and draws it.
        await ctx.page.goto(`${url}#/lessons/fencing`, { waitUntil: 'load' });
        await ctx.waitReady();
        await ctx.page.waitForSelector('#view-title[data-place]', { timeout: 30000 });
        await ctx.page.waitForSelector('#timeline');
        // An exercise of the pack's lesson is checked and gives a code ...
        await ctx.page.goto(`${url}#/lessons/ledger-drill/one-order`, { waitUntil: 'load' });
        await ctx.waitReady();
        const code = await solveDrill(ctx.page);
        // ... which verifies in the facilitator's view of the same file, in another browser,
        // reached through the page's own link (the studio's bundle, loaded in the page).
        const fresh = await ctx.context.browser().newContext();
        try {
          await fresh.setOffline(true);
          const page = await fresh.newPage();
          const errors = [];
          page.on('pageerror', (e) => errors.push(e.message));
          page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
          await page.goto(`${url}#/lessons`, { waitUntil: 'load' });
          await page.waitForSelector('li[data-lesson="ledger-drill"]', { timeout: 30000 });
          await page.click('a[href="#/facilitator"]');
          const counts = await verifyCode(page, code);
          assert(counts.includes('ledger-drill / one-order: 1 verified'), `the roster counts it: ${counts}`);
          assertEqual(JSON.stringify(errors), '[]', 'no error in the facilitator\'s browser');
        } finally {
          await fresh.close();
        }
      } finally {
        await ctx.context.setOffline(false);
        done();
      }
    },
  },
  {
    // One visit to the sandbox alone, then the room's network drops, then the lesson's link is
    // followed in the same tab: the lessons' bundle and the rest of its code come from the
    // offline copy, loaded in the page.
    name: 'workshop_room::offline_from_the_sandbox_to_a_packs_lesson_in_the_same_tab',
    async run(ctx) {
      const { out, done } = pack();
      const server = await pythonServer(out);
      try {
        await openOn(ctx, server.url, '#/sandbox');
        await ctx.page.waitForSelector('#offline-status.ready', { timeout: 30000 });
        assertEqual(await ctx.text('#offline-status'), 'Ready to work offline.', 'the page says when its copy is ready');
        server.close();
        await ctx.context.setOffline(true);
        await ctx.page.evaluate(() => { location.hash = '#/lessons/ledger-drill/one-order'; });
        await waitPlace(ctx, 'one-order');
        await until(() => ctx.page.evaluate(() => globalThis.__lockstepSplit && globalThis.__lockstepSplit.loaded), 'the rest of the code to load');
        assert(!(await ctx.exists('#split-failed')), 'no part of the code failed to load');
        assert(!(await ctx.exists('#course-error')), 'the lessons loaded');
        await ctx.page.selectOption('#protocol-east-app', 'single:east-locks');
        await ctx.page.selectOption('#protocol-west-app', 'single:east-locks');
        await until(async () => (await ctx.text('#verdict-headline')).startsWith('Exclusion holds'), 'the run to hold');
        // And on to the facilitator's view, the studio's bundle, still offline.
        await ctx.page.evaluate(() => { location.hash = '#/facilitator'; });
        await ctx.page.waitForSelector('[data-exercise="one-order"]', { timeout: 30000 });
        assert(!(await ctx.exists('#split-failed')), 'no part of the code failed to load');
      } finally {
        await ctx.context.setOffline(false);
        server.close();
        done();
      }
    },
  },
  {
    name: 'workshop_room::a_new_build_is_announced_and_never_forced',
    async run(ctx) {
      const { out, done } = pack();
      const server = await pythonServer(out);
      try {
        await openOn(ctx, server.url, '#/lessons');
        await ctx.page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
        await ctx.reload();
        assert(await ctx.page.evaluate(() => !!navigator.serviceWorker.controller), 'the page is drawn from the offline copy');
        // A new build is deployed: its worker takes over, and the page says so without reloading.
        const sw = path.join(out, 'sw.js');
        fs.writeFileSync(sw, fs.readFileSync(sw, 'utf8').replace(/^const VERSION = .*$/m, "const VERSION = 'next-build';"));
        await ctx.page.fill('#lesson-text', 'kept while the site updates');
        await ctx.page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => r.update()));
        await ctx.page.waitForSelector('#site-updated', { timeout: 30000 });
        assert((await ctx.text('#site-updated')).includes('Reload to use it'), 'the notice offers a reload');
        assertEqual(await ctx.value('#lesson-text'), 'kept while the site updates', 'nothing typed is lost');
        await ctx.page.click('#site-updated a');
        await ctx.waitReady();
        assert(await ctx.page.evaluate(async () => (await caches.keys()).includes('lockstep-next-build')), 'the new copy is the one kept');
      } finally {
        server.close();
        done();
      }
    },
  },
];
