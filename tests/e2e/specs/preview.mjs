// A lesson step is first drawn from the course's files (static/lesson-preview.js): its title,
// narration and a picture of its run, before the course's bundle is even asked for. The live
// view then takes its place with the same step and the same run. Where the live step would show
// another run (the learner's own, a lesson that replaces a shipped one) or no step at all (an
// exercise), there is no picture.
import fs from 'node:fs';
import path from 'node:path';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { ROOT } from '../lib/cli.mjs';

/** A shipped lesson's compact form, as the page fetches it. */
function lessonFile(id) {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'static', 'course', `${id}.json`), 'utf8')).lesson;
}

/**
 * Holds the course's bundle back until `release()`; `asked` resolves, when the page asks for
 * it, to whether the step's picture was on the page at that moment.
 */
async function holdBundle(page) {
  let release;
  const gate = new Promise((r) => (release = r));
  let asked;
  const seen = new Promise((r) => (asked = r));
  await page.route('**/course.js', async (route) => {
    asked(await page.evaluate(() => Boolean(document.getElementById('preview'))).catch((e) => `unknown: ${e.message}`));
    await gate;
    await route.continue();
  });
  return { release, seen };
}

/** The live step's view, once it has taken over. */
async function liveStep(ctx, place) {
  await ctx.waitReady();
  await ctx.page.waitForSelector(`#view-title[data-place="${place}"]`, { timeout: 20000 });
  await ctx.frames(2);
}

export const tests = [
  {
    name: 'preview::a_step_is_read_from_the_courses_files_before_its_simulator_arrives',
    serviceWorkers: 'block',
    async run(ctx) {
      const lesson = lessonFile('two-orders');
      const step = lesson.steps.find((s) => s.id === 'two-services');
      const fetched = [];
      ctx.page.on('request', (r) => fetched.push(new URL(r.url()).pathname.split('/').pop()));
      const held = await holdBundle(ctx.page);
      await ctx.page.goto(`${ctx.baseURL}#/lessons/two-orders/two-services`, { waitUntil: 'domcontentloaded' });
      assertEqual(await held.seen, true, 'the step was on the page before the bundle was asked for');
      const before = [...fetched];
      assert(!before.some((f) => f.endsWith('.wasm')), `no bundle before the step shows: ${before.join(' ')}`);
      for (const f of ['two-orders.json', 'two-orders.two-services.run.svg']) assert(before.includes(f), `${f} in ${before.join(' ')}`);
      const shown = await ctx.page.evaluate(() => {
        const p = document.getElementById('preview');
        return {
          title: p.querySelector('h2').textContent,
          where: p.querySelector('.where').textContent,
          narration: p.querySelector('.narration').textContent,
          picture: p.querySelector('svg desc').textContent,
          visible: getComputedStyle(p).display !== 'none' && p.getBoundingClientRect().height > 300,
          controls: p.querySelectorAll('button, input, select').length,
        };
      });
      assertEqual(shown.title, step.title, 'the step\'s title');
      assert(shown.narration.includes('Now the scenario as it ships.'), `the narration: ${shown.narration}`);
      assert(shown.visible, 'the preview is on screen');
      assertEqual(shown.controls, 0, 'no control before the simulator can answer');

      held.release();
      await liveStep(ctx, 'two-services');
      const live = await ctx.page.evaluate(() => ({
        preview: Boolean(document.getElementById('preview')),
        attr: document.documentElement.dataset.preview ?? null,
        title: document.getElementById('view-title').textContent,
        where: document.getElementById('place-of').textContent,
        narration: document.querySelector('#narration .narration').textContent,
        width: document.querySelector('#timeline canvas, canvas#timeline')?.getAttribute('width'),
      }));
      assert(!live.preview && live.attr === null, 'the live view took the preview\'s place');
      assertEqual(live.title, step.title, 'the live step is the previewed one');
      assertEqual(shown.where, live.where, 'where the step is, in the same words');
      assertEqual(shown.narration, live.narration, 'the same narration');
      const headline = await ctx.text('#verdict-headline');
      assert(shown.picture.startsWith(`${headline} Seed 1, `), `the picture's run is the live run: "${shown.picture}" against "${headline}"`);

      // Laid out while hidden, the live view measured its timeline as it is shown: the same
      // width as on a page that had no preview.
      const page = await ctx.context.newPage();
      await page.route('**/lesson-preview.js', (route) => route.abort());
      await page.goto(`${ctx.baseURL}#/lessons/two-orders/two-services`);
      await page.waitForSelector('#view-title[data-place="two-services"]', { timeout: 20000 });
      const width = await page.evaluate(() => document.querySelector('#timeline canvas, canvas#timeline')?.getAttribute('width'));
      await page.close();
      assert(width, 'the timeline has a width');
      assertEqual(live.width, width, 'the timeline\'s width with and without the preview');
    },
  },
  {
    // Each case: the page asks for the bundle with no picture on it, and the live view draws
    // the place.
    name: 'preview::no_picture_where_the_live_step_would_show_another_run_or_no_step',
    serviceWorkers: 'block',
    async run(ctx) {
      const progress = JSON.stringify({ lessons: { regions: { seen: ['partition'], gates: ['partition'], gate_edits: { partition: [] }, solved: {} } } });
      const cases = [
        { why: 'an exercise', address: '#/lessons/fencing/two-sources-one-table', place: 'two-sources-one-table' },
        { why: 'a step whose goal the learner met (their own run)', address: '#/lessons/regions/partition', place: 'partition', store: ['lockstep.progress.v1', progress] },
        { why: 'lessons the learner opened, which may replace a shipped one', address: '#/lessons/regions/partition', place: 'partition', store: ['lockstep.lessons.v1', '{"files":[]}'] },
        { why: 'a folder of lessons beside the site', address: '#/lessons/regions/partition', place: 'partition', folder: true },
      ];
      for (const c of cases) {
        const context = await ctx.context.browser().newContext({ serviceWorkers: 'block' });
        const page = await context.newPage();
        const errors = [];
        page.on('pageerror', (e) => errors.push(e.message));
        // What an earlier visit left in this browser, there before the page's own scripts run.
        if (c.store) await context.addInitScript(([k, v]) => localStorage.setItem(k, v), c.store);
        if (c.folder) {
          // A folder that lists a lesson file the test does not serve: the page says so, and
          // the shipped step is still shown.
          await page.route('**/lessons/index.json', (route) => route.fulfill({ contentType: 'application/json', body: '{"lessons":["missing.md"]}' }));
        }
        const held = await holdBundle(page);
        await page.goto(`${ctx.baseURL}${c.address}`, { waitUntil: 'domcontentloaded' });
        assertEqual(await held.seen, false, `${c.why}: no picture`);
        held.release();
        await page.waitForSelector(`#view-title[data-place="${c.place}"]`, { timeout: 20000 });
        assertEqual(await page.evaluate(() => document.documentElement.dataset.preview ?? null), null, `${c.why}: nothing left of a preview`);
        assertEqual(errors.join('; '), '', `${c.why}: no page error`);
        await context.close();
      }
    },
  },
  {
    // Offline, the simulator is at hand: the offline copy keeps no picture, and a step opens
    // live at once.
    name: 'preview::the_offline_copy_opens_a_step_live_without_its_picture',
    async run(ctx) {
      await ctx.open('#/lessons/regions/partition');
      await ctx.page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
      await until(
        () => ctx.page.evaluate(async () => (await caches.keys()).some((k) => k.startsWith('lockstep-'))),
        'the offline copy to be cached',
        30000,
      );
      const kept = await ctx.page.evaluate(async () => {
        const names = [];
        for (const key of await caches.keys()) for (const r of await (await caches.open(key)).keys()) names.push(new URL(r.url).pathname);
        return names;
      });
      assert(kept.some((n) => n.endsWith('/course/regions.json')), 'the lessons are kept');
      assert(!kept.some((n) => n.endsWith('.run.svg')), 'no step picture is kept');
      await ctx.context.setOffline(true);
      try {
        await ctx.page.goto(`${ctx.baseURL}#/lessons/two-orders/two-services`);
        await ctx.reload();
        await liveStep(ctx, 'two-services');
        assert(!(await ctx.exists('#preview')), 'no preview offline');
      } finally {
        await ctx.context.setOffline(false);
      }
    },
  },
];
